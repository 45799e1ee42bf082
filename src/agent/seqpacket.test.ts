import assert from "node:assert/strict";
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { connectSeqpacket, type SeqpacketMessage, SeqpacketServer, SeqpacketSocket } from "./seqpacket.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-seqpacket-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A socket's messages and end, as promises in arrival order. */
class Inbox {
  readonly messages: SeqpacketMessage[] = [];
  #waiting: ((message: SeqpacketMessage) => void) | undefined;
  readonly closed: Promise<Error | undefined>;
  #close!: (error: Error | undefined) => void;
  constructor() {
    this.closed = new Promise((resolve) => {
      this.#close = resolve;
    });
  }
  readonly handlers = {
    message: (message: SeqpacketMessage) => {
      if (this.#waiting) this.#waiting(message);
      else this.messages.push(message);
      this.#waiting = undefined;
    },
    closed: (error?: Error) => this.#close(error),
  };
  next(): Promise<SeqpacketMessage> {
    const queued = this.messages.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }
}

/** A listening server at a new path and one connection to it: [client, its inbox, server side, its inbox]. */
async function connectedPair(name: string, maxMessageBytes = 1024) {
  const path = join(dir, name);
  const serverInbox = new Inbox();
  let server!: SeqpacketServer;
  const accepted = new Promise<SeqpacketSocket>((resolve) => {
    server = new SeqpacketServer(path, {
      acceptIntervalMs: 0,
      onConnection: (fd) => resolve(new SeqpacketSocket(fd, maxMessageBytes, serverInbox.handlers)),
      onAcceptError: (error) => assert.fail(error),
    });
  });
  const clientInbox = new Inbox();
  const client = connectSeqpacket(path, maxMessageBytes, clientInbox.handlers);
  const serverSide = await accepted;
  server.close();
  return { client, clientInbox, serverSide, serverInbox };
}

describe("SOCK_SEQPACKET sockets", () => {
  test("keep message boundaries and pass a descriptor that reads the same file on the far side", async () => {
    const { client, clientInbox, serverSide, serverInbox } = await connectedPair("pass.sock");
    const file = join(dir, "netns-stand-in");
    writeFileSync(file, "the same file");
    const fd = openSync(file, "r");
    serverSide.send(Buffer.from("first"));
    client.send(Buffer.from("with a descriptor"), fd);
    client.send(Buffer.from("without"));
    closeSync(fd); // the copy in flight, and then the receiver's, stay open on their own

    const first = await serverInbox.next();
    assert.equal(first.data.toString(), "with a descriptor");
    assert.equal(first.fds.length, 1);
    const received = first.fds[0];
    const stat = fstatSync(received);
    const original = statSync(file);
    assert.deepEqual([stat.dev, stat.ino], [original.dev, original.ino]);
    const text = Buffer.alloc(64);
    const n = readSync(received, text, 0, text.length, 0);
    assert.equal(text.subarray(0, n).toString(), "the same file");
    closeSync(received);

    const second = await serverInbox.next();
    assert.deepEqual([second.data.toString(), second.fds], ["without", []]);
    assert.equal((await clientInbox.next()).data.toString(), "first");
    client.close();
    serverSide.close();
  });

  test("the peer's end closes the socket without an error", async () => {
    const { client, serverSide, serverInbox } = await connectedPair("end.sock");
    client.close();
    assert.equal(await serverInbox.closed, undefined);
    assert.equal(serverSide.closed, true);
    assert.throws(() => serverSide.send(Buffer.from("late")), /the socket is closed/);
  });

  test("a message longer than the reader allows closes the socket with an error", async () => {
    const { client, serverInbox } = await connectedPair("long.sock", 8);
    client.send(Buffer.alloc(9));
    const error = await serverInbox.closed;
    assert.match(String(error), /a message longer than 8 bytes/);
    client.close();
  });

  test("connecting where nothing listens fails with the errno's name", () => {
    const inbox = new Inbox();
    assert.throws(() => connectSeqpacket(join(dir, "nobody.sock"), 1024, inbox.handlers), { code: "ENOENT" });
  });

  test("a path longer than a socket address holds is refused", () => {
    const inbox = new Inbox();
    assert.throws(() => connectSeqpacket(join(dir, "x".repeat(120)), 1024, inbox.handlers), {
      code: "ENAMETOOLONG",
    });
  });
});
