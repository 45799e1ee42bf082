// The gateway-api-conversion corpus, one subtest per case (`<case>/config`, `<case>/status`; see
// testing.ts).
import { gatewayApiConversion } from "./gateway-api-conversion.ts";
import { testCorpus } from "./testing.ts";

// Golden cases end in /config or /status; the Go file's code-asserted tests are "extra".
testCorpus(gatewayApiConversion, {
  names: ["config", "status", "extra"],
  of: (id) => (id.endsWith("/config") ? "config" : id.endsWith("/status") ? "status" : "extra"),
});
