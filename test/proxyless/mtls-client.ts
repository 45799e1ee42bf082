// A proxyless client workload in its own process (grpc-js-xds has one bootstrap, so one identity,
// per process): reads GRPC_XDS_BOOTSTRAP_CONFIG, makes one call to `xds:///<target>` with xDS
// credentials (mTLS when the cluster says so, else plaintext) and prints its outcome.
import { Client, credentials } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { outcome } from "./echo.ts";

const target = process.argv[2];
if (!target) throw new Error("usage: mtls-client.ts <target>");
grpcXds.register();
const client = new Client(`xds:///${target}`, new grpcXds.XdsChannelCredentials(credentials.createInsecure()));
const result = await outcome(client, { deadlineMs: 20_000 });
process.stdout.write(`${result}\n`);
client.close();
process.exit(0);
