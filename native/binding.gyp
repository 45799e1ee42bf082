{
  "targets": [
    {
      "target_name": "seqpacket",
      "sources": ["seqpacket.c"],
      "cflags": ["-Wall", "-Wextra"]
    },
    {
      "target_name": "memory",
      "sources": ["memory.c"],
      "cflags": ["-Wall", "-Wextra"]
    }
  ]
}
