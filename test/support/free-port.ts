// A free port for a server that must know its port before it binds (a child process told its port on
// the command line, a control plane that restarts on the same address).
import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago: bound with port 0, then released. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
