// gRPC server reflection (grpc.reflection.v1 and v1alpha, which share one wire format), as istiod
// registers on both xDS ports so grpcurl and friends can list and describe the services. The
// reflection protos are not among the generated bindings, so the few messages involved are read
// and written here by field number; file descriptors come from the protobuf-es registry.
import { type DescFile, type DescService, type Registry, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { type MethodDefinition, type Server, type ServerDuplexStream, status } from "@grpc/grpc-js";

const SERVICES = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"];

// ServerReflectionRequest fields.
const REQ = {
  fileByFilename: 3,
  fileContainingSymbol: 4,
  fileContainingExtension: 5,
  allExtensionNumbers: 6,
  listServices: 7,
};
// ServerReflectionResponse fields.
const RES = { validHost: 1, originalRequest: 2, fileDescriptors: 4, extensionNumbers: 5, listServices: 6, error: 7 };

type Query =
  | { kind: "file"; name: string }
  | { kind: "symbol"; name: string }
  | { kind: "extension"; type: string; number: number }
  | { kind: "extensionNumbers"; type: string }
  | { kind: "listServices" }
  | { kind: "none" };

interface Request {
  host: string;
  query: Query;
}

function decodeRequest(bytes: Uint8Array): Request {
  const r = new BinaryReader(bytes);
  let host = "";
  let query: Query = { kind: "none" };
  while (r.pos < r.len) {
    const [field, wireType] = r.tag();
    if (field === 1) host = r.string();
    else if (field === REQ.fileByFilename) query = { kind: "file", name: r.string() };
    else if (field === REQ.fileContainingSymbol) query = { kind: "symbol", name: r.string() };
    else if (field === REQ.allExtensionNumbers) query = { kind: "extensionNumbers", type: r.string() };
    else if (field === REQ.listServices) {
      r.string();
      query = { kind: "listServices" };
    } else if (field === REQ.fileContainingExtension) {
      const ext = new BinaryReader(r.bytes());
      let type = "";
      let number = 0;
      while (ext.pos < ext.len) {
        const [f, w] = ext.tag();
        if (f === 1) type = ext.string();
        else if (f === 2) number = ext.int32();
        else ext.skip(w);
      }
      query = { kind: "extension", type, number };
    } else r.skip(wireType);
  }
  return { host, query };
}

/** Answers reflection queries from the types in `registry`, listing `services` as the served ones. */
export class Reflection {
  readonly #files = new Map<string, DescFile>();
  readonly #encoded = new Map<DescFile, Uint8Array>();

  constructor(
    private readonly registry: Registry,
    private readonly services: () => readonly string[],
  ) {
    for (const type of registry) this.#addFile(type.file);
  }

  #addFile(file: DescFile): void {
    if (this.#files.has(file.proto.name)) return;
    this.#files.set(file.proto.name, file);
    for (const dep of file.dependencies) this.#addFile(dep);
  }

  /** The encoded ServerReflectionResponse for an encoded request. */
  answer(requestBytes: Uint8Array): Uint8Array {
    const req = decodeRequest(requestBytes);
    const w = new BinaryWriter();
    w.tag(RES.validHost, WireType.LengthDelimited).string(req.host);
    w.tag(RES.originalRequest, WireType.LengthDelimited).bytes(requestBytes);
    const q = req.query;
    if (q.kind === "listServices") {
      w.tag(RES.listServices, WireType.LengthDelimited).fork();
      for (const name of this.services()) {
        w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(name).join();
      }
      w.join();
    } else if (q.kind === "extensionNumbers") {
      if (!this.registry.getMessage(q.type)) return this.#error(w, `type not found: ${q.type}`);
      w.tag(RES.extensionNumbers, WireType.LengthDelimited).fork();
      w.tag(1, WireType.LengthDelimited).string(q.type);
      for (const t of this.registry) {
        if (t.kind === "extension" && t.extendee.typeName === q.type) w.tag(2, WireType.Varint).int32(t.number);
      }
      w.join();
    } else {
      const file = this.#fileFor(q);
      if (!file) return this.#error(w, `not found: ${JSON.stringify(q)}`);
      w.tag(RES.fileDescriptors, WireType.LengthDelimited).fork();
      for (const f of withDependencies(file)) w.tag(1, WireType.LengthDelimited).bytes(this.#encode(f));
      w.join();
    }
    return w.finish();
  }

  #fileFor(q: Query): DescFile | undefined {
    switch (q.kind) {
      case "file":
        return this.#files.get(q.name);
      case "symbol": {
        // A method is named `pkg.Service.Method`: look up its service.
        const type = this.registry.get(q.name) ?? this.registry.getService(q.name.slice(0, q.name.lastIndexOf(".")));
        return type?.file;
      }
      case "extension": {
        const extendee = this.registry.getMessage(q.type);
        return extendee && this.registry.getExtensionFor(extendee, q.number)?.file;
      }
      default:
        return undefined;
    }
  }

  #encode(file: DescFile): Uint8Array {
    let bytes = this.#encoded.get(file);
    if (!bytes) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      this.#encoded.set(file, bytes);
    }
    return bytes;
  }

  #error(w: BinaryWriter, message: string): Uint8Array {
    w.tag(RES.error, WireType.LengthDelimited).fork();
    w.tag(1, WireType.Varint).int32(status.NOT_FOUND);
    w.tag(2, WireType.LengthDelimited).string(message);
    w.join();
    return w.finish();
  }
}

/** The file first, then everything it imports, each once. */
function withDependencies(file: DescFile): DescFile[] {
  const out: DescFile[] = [];
  const seen = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    out.push(f);
    f.dependencies.forEach(visit);
  };
  visit(file);
  return out;
}

const bytesMethod = (service: string): MethodDefinition<Buffer, Uint8Array> => ({
  path: `/${service}/ServerReflectionInfo`,
  requestStream: true,
  responseStream: true,
  requestSerialize: (b) => b,
  requestDeserialize: (b) => b,
  responseSerialize: (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  responseDeserialize: (b) => b,
});

/** Registers reflection (v1 and v1alpha) on `server` for the given services and the types of `registry`. */
export function addReflection(server: Server, registry: Registry, services: readonly DescService[]): void {
  const names = [...services.map((s) => s.typeName), ...SERVICES];
  const reflection = new Reflection(registry, () => names);
  for (const service of SERVICES) {
    server.addService(
      { serverReflectionInfo: bytesMethod(service) },
      {
        serverReflectionInfo: (call: ServerDuplexStream<Buffer, Uint8Array>) => {
          call.on("data", (req: Buffer) => call.write(reflection.answer(req)));
          call.on("end", () => call.end());
        },
      },
    );
  }
}
