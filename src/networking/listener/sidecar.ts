// A sidecar's whole LDS answer, in Istio's order: outbound per-port listeners, the HTTP proxy
// listener, virtualOutbound, then virtualInbound (or the inbound listeners bound to ports).
import type { listener } from "../../api/index.ts";
import { buildSidecarInboundListeners, type SidecarInboundInput } from "./inbound.ts";
import { buildSidecarOutboundListeners, type SidecarOutboundInput } from "./outbound.ts";

export type SidecarInput = SidecarOutboundInput & Omit<SidecarInboundInput, keyof SidecarOutboundInput>;

export function buildSidecarListeners(input: SidecarInput): listener.Listener[] {
  return [...buildSidecarOutboundListeners(input), ...buildSidecarInboundListeners(input)];
}
