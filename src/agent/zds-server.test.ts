// The ZDS server against a ztunnel played by the test over a real SOCK_SEQPACKET socket: each pod's
// "network namespace" is a temporary file whose text names the pod, and the test reads that text
// through the descriptor ztunnel received, which proves it is the same open file.
import assert from "node:assert/strict";
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { pino } from "pino";
import { zdsapi } from "../api/index.ts";
import { connectSeqpacket, type SeqpacketMessage, type SeqpacketSocket } from "./seqpacket.ts";
import { type ZdsPod, ZdsServer } from "./zds-server.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-zds-"));
const openFds: number[] = [];
const servers: ZdsServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});
after(() => {
  for (const fd of openFds.splice(0)) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

let socketCount = 0;
/** A server on a new socket path, logging into lines. */
function startServer(ackTimeoutMs?: number) {
  const lines: { msg: string; ackError?: string }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const socketPath = join(dir, `ztunnel-${++socketCount}.sock`);
  const server = new ZdsServer({ socketPath, log, ackTimeoutMs });
  servers.push(server);
  return { server, socketPath, lines };
}

/** A pod and its stand-in network namespace: an open file whose text is the pod's name. */
function pod(name: string): { pod: ZdsPod; netnsFd: number } {
  const file = join(dir, `netns-${name}`);
  writeFileSync(file, name);
  const netnsFd = openSync(file, "r");
  openFds.push(netnsFd);
  return { pod: { uid: `uid-${name}`, name, namespace: "ns", serviceAccount: "sa" }, netnsFd };
}

/** The text of the file behind a received descriptor. */
function fileText(fd: number): string {
  const buffer = Buffer.alloc(256);
  return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString();
}

/** What ztunnel saw of one request: its payload, and for an add the text behind the descriptor. */
interface Seen {
  case: zdsapi.WorkloadRequest["payload"]["case"];
  uid?: string;
  name?: string;
  netns?: string;
  fds: number;
}

/** A ztunnel: connects, says hello, reads requests and acknowledges them. */
class TestZtunnel {
  readonly #messages: SeqpacketMessage[] = [];
  #waiting: (() => void) | undefined;
  readonly #socket: SeqpacketSocket;
  readonly closed: Promise<Error | undefined>;

  constructor(socketPath: string) {
    let closed!: (error?: Error) => void;
    this.closed = new Promise((resolve) => {
      closed = resolve;
    });
    this.#socket = connectSeqpacket(socketPath, 1024, {
      message: (message) => {
        this.#messages.push(message);
        this.#waiting?.();
      },
      closed: (error) => {
        closed(error);
        this.#waiting?.();
      },
    });
  }

  static connected(socketPath: string): TestZtunnel {
    const ztunnel = new TestZtunnel(socketPath);
    ztunnel.sendHello();
    return ztunnel;
  }

  sendHello(): void {
    this.#socket.send(toBinary(zdsapi.ZdsHelloSchema, create(zdsapi.ZdsHelloSchema, { version: zdsapi.Version.V1 })));
  }

  /** The next request; the descriptors that came with it are read and closed. */
  async next(): Promise<Seen> {
    while (this.#messages.length === 0) {
      if (this.#socket.closed) throw new Error("ztunnel's connection closed");
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
    const { data, fds } = this.#messages.shift()!;
    const { payload } = fromBinary(zdsapi.WorkloadRequestSchema, data);
    const seen: Seen = { case: payload.case, fds: fds.length };
    if (payload.case === "add") {
      Object.assign(seen, { uid: payload.value.uid, name: payload.value.workloadInfo?.name });
      if (fds.length === 1) seen.netns = fileText(fds[0]);
    } else if (payload.case === "keep" || payload.case === "del") {
      seen.uid = payload.value.uid;
    }
    for (const fd of fds) closeSync(fd);
    return seen;
  }

  ack(error = ""): void {
    const ack = create(zdsapi.WorkloadResponseSchema, { payload: { case: "ack", value: { error } } });
    this.#socket.send(toBinary(zdsapi.WorkloadResponseSchema, ack));
  }

  /** Reads and acknowledges requests up to and including snapshot_sent; returns what came before it. */
  async takeSnapshot(): Promise<Seen[]> {
    const seen: Seen[] = [];
    for (let request = await this.next(); ; request = await this.next()) {
      this.ack();
      if (request.case === "snapshotSent") return seen;
      seen.push(request);
    }
  }

  send(data: Uint8Array): void {
    this.#socket.send(data);
  }

  close(): void {
    this.#socket.close();
  }
}

const added = (name: string): Seen => ({ case: "add", uid: `uid-${name}`, name, netns: name, fds: 1 });

/** Adds a new pod, which ztunnel is sent (with its namespace) and acknowledges. */
async function addAcknowledged(server: ZdsServer, ztunnel: TestZtunnel, name: string): Promise<void> {
  const { pod: newPod, netnsFd } = pod(name);
  const adding = server.addPod(newPod, netnsFd);
  assert.deepEqual(await ztunnel.next(), added(name));
  ztunnel.ack();
  await adding;
}

/** Waits (on the event loop, not a clock) until the server counts n connections. */
async function connectionsReach(server: ZdsServer, n: number): Promise<void> {
  while (server.connections !== n) await new Promise((resolve) => setImmediate(resolve));
}

describe("ZDS server", () => {
  test("a ztunnel that connects gets a snapshot: each pod with its namespace, kept pods, then snapshot_sent", async () => {
    const { server, socketPath } = startServer();
    const a = pod("a");
    const b = pod("b");
    await assert.rejects(server.addPod(a.pod, a.netnsFd), /no ztunnel is connected to add pod ns\/a \(uid uid-a\)/);
    await assert.rejects(server.addPod(b.pod, b.netnsFd), /no ztunnel is connected/);
    server.keepPod("uid-starting");
    server.keepPod("uid-a"); // held with its namespace already: stays an add

    const ztunnel = TestZtunnel.connected(socketPath);
    assert.deepEqual(await ztunnel.takeSnapshot(), [
      added("a"),
      added("b"),
      { case: "keep", uid: "uid-starting", fds: 0 },
    ]);
    assert.equal(server.connections, 1);
    ztunnel.close();
  });

  test("add and delete after the snapshot: each acknowledged, an error ack rejects with ztunnel's error", async () => {
    const { server, socketPath } = startServer();
    const ztunnel = TestZtunnel.connected(socketPath);
    assert.deepEqual(await ztunnel.takeSnapshot(), []);

    await addAcknowledged(server, ztunnel, "c");

    const d = pod("d");
    const refused = server.addPod(d.pod, d.netnsFd);
    assert.deepEqual(await ztunnel.next(), added("d"));
    ztunnel.ack("failed to create proxy");
    await assert.rejects(refused, {
      message: "ztunnel connection 1 refused the add of pod ns/d (uid uid-d): failed to create proxy",
    });

    const deleting = server.deletePod("uid-c");
    assert.deepEqual(await ztunnel.next(), { case: "del", uid: "uid-c", fds: 0 });
    ztunnel.ack();
    await deleting;

    const refusedDelete = server.deletePod("uid-d");
    assert.deepEqual(await ztunnel.next(), { case: "del", uid: "uid-d", fds: 0 });
    ztunnel.ack("no such workload");
    await assert.rejects(refusedDelete, {
      message: "delete of pod ns/d (uid uid-d) failed: ztunnel connection 1 refused it: no such workload",
    });
    ztunnel.close();
  });

  test("a ztunnel that reconnects gets the pods held now, including one added while none was connected", async () => {
    const { server, socketPath } = startServer();
    const first = TestZtunnel.connected(socketPath);
    await first.takeSnapshot();
    await addAcknowledged(server, first, "e");
    first.close();
    await connectionsReach(server, 0);

    const f = pod("f");
    await assert.rejects(server.addPod(f.pod, f.netnsFd), /no ztunnel is connected/);
    await server.deletePod("uid-e"); // no ztunnel to tell: done

    const second = TestZtunnel.connected(socketPath);
    assert.deepEqual(await second.takeSnapshot(), [added("f")]);
    second.close();
  });

  test("with two ztunnels connected, a new pod goes to the later one and a deletion to both", async () => {
    const { server, socketPath } = startServer();
    const older = TestZtunnel.connected(socketPath);
    await older.takeSnapshot();
    const newer = TestZtunnel.connected(socketPath);
    await newer.takeSnapshot();

    await addAcknowledged(server, newer, "g");

    const deleting = server.deletePod("uid-g");
    assert.deepEqual(await older.next(), { case: "del", uid: "uid-g", fds: 0 });
    assert.deepEqual(await newer.next(), { case: "del", uid: "uid-g", fds: 0 });
    older.ack();
    newer.ack();
    await deleting;

    // The later one gone, the earlier one takes new pods again.
    newer.close();
    await connectionsReach(server, 1);
    await addAcknowledged(server, older, "h");
    older.close();
  });

  test("an ack not sent in time rejects the request and closes the connection", async () => {
    const { server, socketPath } = startServer(50);
    const ztunnel = TestZtunnel.connected(socketPath);
    await ztunnel.takeSnapshot();
    const i = pod("i");
    const adding = server.addPod(i.pod, i.netnsFd);
    assert.deepEqual(await ztunnel.next(), added("i"));
    await assert.rejects(adding, {
      message: "ztunnel connection 1 sent no ack of the add of pod ns/i (uid uid-i) within 50 ms",
    });
    assert.equal(await ztunnel.closed, undefined); // closed by the server
    assert.equal(server.connections, 0);
  });

  test("a ztunnel that says no hello in time is disconnected", async () => {
    const { server, socketPath, lines } = startServer(50);
    const silent = new TestZtunnel(socketPath);
    await silent.closed;
    assert.equal(server.connections, 0);
    assert.ok(lines.some((line) => line.msg === "ztunnel connection failed before its snapshot was sent"));
  });

  test("a message ztunnel was not asked for is a protocol error that closes the connection", async () => {
    const { server, socketPath, lines } = startServer();
    const ztunnel = TestZtunnel.connected(socketPath);
    await ztunnel.takeSnapshot();
    ztunnel.ack();
    await ztunnel.closed;
    await connectionsReach(server, 0);
    const disconnected = lines.find((line) => line.msg === "ztunnel disconnected") as { err?: { message: string } };
    assert.equal(disconnected.err?.message, "ztunnel connection 1: protocol error: it sent a message unasked");
  });

  test("a hello that does not decode closes the connection", async () => {
    const { server, socketPath, lines } = startServer();
    const ztunnel = new TestZtunnel(socketPath);
    ztunnel.send(Buffer.from([0xff, 0xff]));
    await ztunnel.closed;
    await connectionsReach(server, 0);
    const failed = lines.find((line) => line.msg === "ztunnel connection failed before its snapshot was sent");
    assert.match(
      (failed as { err?: { message: string } }).err?.message ?? "",
      /protocol error: its hello does not decode/,
    );
  });

  test("an error ack during the snapshot is logged and the snapshot goes on", async () => {
    const { server, socketPath, lines } = startServer();
    const j = pod("j");
    const k = pod("k");
    await assert.rejects(server.addPod(j.pod, j.netnsFd));
    await assert.rejects(server.addPod(k.pod, k.netnsFd));
    const ztunnel = TestZtunnel.connected(socketPath);
    assert.deepEqual(await ztunnel.next(), added("j"));
    ztunnel.ack("netns gone");
    assert.deepEqual(await ztunnel.takeSnapshot(), [added("k")]);
    assert.ok(
      lines.some((line) => line.msg === "ztunnel refused a pod of the snapshot" && line.ackError === "netns gone"),
    );
    ztunnel.close();
  });

  test("a stale socket file is replaced, and closing the server removes it", () => {
    const socketPath = join(dir, "stale.sock");
    writeFileSync(socketPath, "left by a previous agent");
    const server = new ZdsServer({ socketPath, log: pino({ level: "silent" }) });
    assert.ok(existsSync(socketPath));
    server.close();
    assert.equal(existsSync(socketPath), false);
  });

  test("a socket path that cannot be listened on is an error naming it", () => {
    const socketPath = join(dir, "missing-dir", "ztunnel.sock");
    assert.throws(() => new ZdsServer({ socketPath, log: pino({ level: "silent" }) }), {
      message: `cannot listen for ztunnel on ${socketPath}: bind: No such file or directory`,
    });
  });

  test("a netns that is not an open descriptor is refused, naming the pod", async () => {
    const { server } = startServer();
    await assert.rejects(server.addPod(pod("l").pod, -1), {
      name: "TypeError",
      message: "pod ns/l (uid uid-l): netnsFd -1 is not an open file descriptor",
    });
    const m = pod("m");
    const closed = openFds.pop()!;
    closeSync(closed);
    await assert.rejects(server.addPod(m.pod, closed), {
      message: `pod ns/m (uid uid-m): netnsFd ${closed} is not an open file descriptor`,
    });
  });

  test("ztunnel going away while an ack is awaited rejects the request, naming it", async () => {
    const { server, socketPath } = startServer();
    const ztunnel = TestZtunnel.connected(socketPath);
    await ztunnel.takeSnapshot();
    const n = pod("n");
    const adding = server.addPod(n.pod, n.netnsFd);
    assert.deepEqual(await ztunnel.next(), added("n"));
    ztunnel.close();
    await assert.rejects(adding, {
      message: "ztunnel connection 1 closed before its ack of the add of pod ns/n (uid uid-n): ztunnel closed it",
    });
    assert.equal(server.connections, 0);
  });

  test("a pod added while ztunnel has not said hello yet is sent after the snapshot", async () => {
    const { server, socketPath } = startServer();
    const o = pod("o");
    await assert.rejects(server.addPod(o.pod, o.netnsFd));
    const ztunnel = new TestZtunnel(socketPath);
    await connectionsReach(server, 1);
    const p = pod("p");
    const adding = server.addPod(p.pod, p.netnsFd);
    ztunnel.sendHello();
    assert.deepEqual(await ztunnel.takeSnapshot(), [added("o"), added("p")]);
    assert.deepEqual(await ztunnel.next(), added("p"));
    ztunnel.ack();
    await adding;
    ztunnel.close();
  });
});
