// MeshNetworks: the `--meshNetworks` YAML (which network each endpoint is on, and how to reach each
// network's gateway), decoded and validated as Istio's ParseMeshNetworks and ValidateMeshNetworks.
import { decodeYaml } from "./mesh-decode.ts";
import type { MeshNetworks, Network } from "./mesh-types.ts";
import { fqdnError, isDns1123Label } from "./validation/common/hosts.ts";
import { ipAddressError, ipSubnetError } from "./validation/common/net.ts";
import { portError } from "./validation/common/ports.ts";
import { report } from "./validation/common/report.ts";
import { Findings } from "./validation/findings.ts";

export type { MeshNetworks } from "./mesh-types.ts";

/** Reads a mesh networks file's text (absent or empty: no networks); throws an Error listing every problem. */
export function loadMeshNetworks(yamlText?: string): MeshNetworks {
  const out = new Findings("");
  const decoded = decodeYaml(yamlText ?? "", "MeshNetworks", out) as MeshNetworks;
  const networks = { networks: decoded.networks ?? {} };
  if (out.ok) {
    for (const [name, network] of Object.entries(networks.networks)) {
      validateNetwork(network ?? {}, `invalid network ${name}:`, out.at("networks").at(name));
    }
  }
  if (!out.ok) {
    const lines = out.errors.map((e) => `  ${e.path}: ${e.message}`);
    throw new Error(`invalid mesh networks:\n${lines.join("\n")}`);
  }
  return networks;
}

function validateNetwork(network: Network, prefix: string, out: Findings): void {
  const error = (at: Findings, message: string | undefined) => {
    report(at, message === undefined ? undefined : `${prefix} ${message}`);
  };
  (network.endpoints ?? []).forEach((endpoint, i) => {
    const at = out.at("endpoints", i);
    if (endpoint.fromCidr !== undefined) error(at.at("fromCidr"), ipSubnetError(endpoint.fromCidr));
    else if (endpoint.fromRegistry !== undefined && !isDns1123Label(endpoint.fromRegistry)) {
      error(at.at("fromRegistry"), `invalid registry name: ${endpoint.fromRegistry}`);
    }
  });
  (network.gateways ?? []).forEach((gateway, i) => {
    const at = out.at("gateways", i);
    if (gateway.registryServiceName !== undefined) {
      error(at.at("registryServiceName"), fqdnError(gateway.registryServiceName));
    } else if (gateway.address !== undefined) {
      // Istio resolves host names of gateways by default (RESOLVE_HOSTNAME_GATEWAYS).
      const address = gateway.address;
      if (ipAddressError(address) !== undefined && fqdnError(address) !== undefined) {
        error(at.at("address"), `${address} is not a valid IP address or DNS name`);
      }
    }
    error(at.at("port"), portError(gateway.port ?? 0));
  });
}
