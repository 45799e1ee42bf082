export * from "./kinds.ts";
export { DEFAULT_MESH_CONFIG, loadMeshConfig, type MeshConfig, type ProxyConfig } from "./mesh.ts";
export { loadMeshNetworks } from "./mesh-networks.ts";
export * from "./model.ts";
export type * from "./types/index.ts";
export { objectRef, validateObject } from "./validate.ts";
export { isValidCipherSuite } from "./validation/common/ciphers.ts";
export { parseProtocol } from "./validation/common/ports.ts";
export { DEFAULT_CONTEXT, Findings, type ValidationContext } from "./validation/index.ts";
