// `sluice-agent wait` (pilot-agent wait): poll a readiness URL until it answers 200, for a postStart
// hook that holds the application until the agent is ready.
export interface WaitOptions {
  url: string;
  timeoutMs: number;
  requestTimeoutMs: number;
  periodMs: number;
}

/**
 * Resolves once `url` answers 200; rejects with Istio's message when the timeout passes first. As
 * pilot-agent, each attempt comes one period after the last, and none starts after the timeout.
 */
export async function waitUntilReady(options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = "<nil>";
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining < options.periodMs) {
      await sleep(Math.max(remaining, 0));
      throw new Error(`timeout waiting for Envoy proxy to become ready. Last error: ${lastError}`);
    }
    await sleep(options.periodMs);
    try {
      const res = await fetch(options.url, { signal: AbortSignal.timeout(options.requestTimeoutMs) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      lastError = `HTTP status code ${res.status}`;
    } catch (err) {
      lastError = (err as Error).message;
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
