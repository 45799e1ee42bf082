{
  "targets": [
    {
      "target_name": "seqpacket",
      "sources": ["seqpacket.c"],
      "cflags": ["-Wall", "-Wextra"]
    }
  ]
}
