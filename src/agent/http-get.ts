// One HTTP(S) GET without connection reuse, from a chosen source address: what the status server
// needs to probe the application (Kubernetes' prober opens a fresh connection each time) and to
// scrape its metrics.
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";

export interface HttpGetOptions {
  headers?: OutgoingHttpHeaders;
  /** Abort after this long; 0 or absent waits forever (a Go http.Client with no Timeout). */
  timeoutMs?: number;
  /** Source address of the connection. */
  localAddress?: string;
  /** Resolve the host to this address family only. */
  family?: 4 | 6;
}

export interface HttpGetResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** GETs `url`; rejects on connection errors and on timeout. Certificates are not verified (as kubelet). */
export function httpGet(url: URL, options: HttpGetOptions = {}): Promise<HttpGetResponse> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: "GET",
      headers: options.headers,
      localAddress: options.localAddress,
      family: options.family,
      agent: false,
      rejectUnauthorized: false,
    });
    // The whole exchange has the deadline, as Go's http.Client.Timeout.
    const timer = options.timeoutMs
      ? setTimeout(() => req.destroy(new Error(`timeout after ${options.timeoutMs} ms`)), options.timeoutMs)
      : undefined;
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    req.on("error", fail);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.end();
  });
}
