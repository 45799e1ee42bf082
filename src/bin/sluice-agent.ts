// sluice-agent: the node agent beside each proxy (Istio's pilot-agent). Its status server, SDS server,
// xDS proxy and bootstrap generation are tracked by issue 7; until then it only reports that.
process.stderr.write("sluice-agent: the node agent is not built yet (see issue 7)\n");
process.exitCode = 2;
