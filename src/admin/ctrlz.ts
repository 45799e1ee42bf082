// ControlZ, the part `istioctl admin log` and `sluice admin log` use: Istio's logging scopes as JSON
// under /scopej/ (GET the list or one scope; PUT one to set its output and stack trace levels, 202).
// Like istiod's it listens on localhost:9876 unless told otherwise (--ctrlz_address, --ctrlz_port),
// so changing levels needs a shell in the pod or a port-forward, which the API server authorizes.
import type { AddressInfo } from "node:net";
import fastify from "fastify";
import type { LogScopes } from "../log/index.ts";

export interface ControlZ {
  readonly port: number;
  stop(): Promise<void>;
}

const TEXT = "text/plain; charset=utf-8";
/** Go's json.Encoder: compact, one line. */
const json = (value: unknown) => `${JSON.stringify(value)}\n`;

/** Starts ControlZ on `host` ("*" is every address, as istiod's flag) and `port` (0: any free one). */
export async function startControlZ(scopes: LogScopes, host: string, port: number): Promise<ControlZ> {
  const app = fastify({ logger: false });
  app.removeAllContentTypeParsers();
  // istioctl sends its JSON without a content type that says so; read every body as text.
  app.addContentTypeParser("*", { parseAs: "string" }, (_req, body, done) => done(null, body));
  app.setNotFoundHandler((_req, reply) => reply.code(404).type(TEXT).send("404 page not found\n"));
  const list = async (_req: unknown, reply: import("fastify").FastifyReply) =>
    reply.type("application/json; charset=utf-8").send(json(scopes.list()));
  app.get("/scopej", list);
  app.get("/scopej/", list);
  app.get<{ Params: { scope: string } }>("/scopej/:scope", async (req, reply) => {
    const info = scopes.info(req.params.scope);
    if (!info) return reply.code(400).type(TEXT).send(`unknown scope name: ${req.params.scope}`);
    return reply.type("application/json; charset=utf-8").send(json(info));
  });
  app.put<{ Params: { scope: string } }>("/scopej/:scope", async (req, reply) => {
    let change: unknown;
    try {
      change = JSON.parse(String(req.body ?? ""));
    } catch (err) {
      return reply
        .code(400)
        .type(TEXT)
        .send(`unable to decode request: ${(err as Error).message}`);
    }
    const levels = change !== null && typeof change === "object" ? change : {};
    if (!scopes.update(req.params.scope, levels)) {
      return reply.code(400).type(TEXT).send(`unknown scope name: ${req.params.scope}`);
    }
    return reply.code(202).send();
  });
  try {
    await app.listen({ host: host === "*" ? "::" : host, port });
  } catch (err) {
    throw new Error(`ControlZ: cannot listen on ${host}:${port}: ${(err as Error).message}`);
  }
  return { port: (app.server.address() as AddressInfo).port, stop: () => app.close() };
}
