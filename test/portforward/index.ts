export { type ForwardRequest, PortForwardFront } from "./front.ts";
export { PORT_FORWARD_PROTOCOL } from "./protocol.ts";
