// For tests: the Kubernetes API server's structural checks of a Pod spec, for the fields injection
// writes (container names, ports, env, volumes and their mounts, probes, native sidecars). Throws an
// AssertionError listing every problem.
import assert from "node:assert/strict";
import type { Container, Pod, Probe } from "../../src/webhooks/inject/pod.ts";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// IANA service name: at most 15 characters, letters, digits and single hyphens, at least one letter.
const PORT_NAME = /^(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]?$/;
const VOLUME_SOURCES = [
  "emptyDir",
  "configMap",
  "secret",
  "projected",
  "downwardAPI",
  "hostPath",
  "persistentVolumeClaim",
  "csi",
  "ephemeral",
  "nfs",
];

export function podProblems(pod: Pod): string[] {
  const problems: string[] = [];
  const spec = pod.spec;
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) problems.push("spec.containers: required");
  const volumes = new Set<string>();
  for (const [i, volume] of (spec.volumes ?? []).entries()) {
    const where = `spec.volumes[${i}]`;
    if (!DNS1123_LABEL.test(volume.name)) problems.push(`${where}.name: invalid ${JSON.stringify(volume.name)}`);
    if (volumes.has(volume.name)) problems.push(`${where}.name: duplicate ${volume.name}`);
    volumes.add(volume.name);
    const sources = VOLUME_SOURCES.filter((s) => volume[s] !== undefined);
    if (sources.length > 1) problems.push(`${where}: more than one volume source (${sources.join(", ")})`);
  }
  const names = new Set<string>();
  const all: [string, Container][] = [
    ...(spec.initContainers ?? []).map((c, i): [string, Container] => [`spec.initContainers[${i}]`, c]),
    ...(spec.containers ?? []).map((c, i): [string, Container] => [`spec.containers[${i}]`, c]),
  ];
  for (const [where, c] of all) {
    if (!DNS1123_LABEL.test(c.name)) problems.push(`${where}.name: invalid ${JSON.stringify(c.name)}`);
    if (names.has(c.name)) problems.push(`${where}.name: duplicate ${c.name}`);
    names.add(c.name);
    if (!c.image) problems.push(`${where}.image: required`);
    const isInit = where.startsWith("spec.initContainers");
    if (c.restartPolicy !== undefined && (!isInit || c.restartPolicy !== "Always")) {
      problems.push(`${where}.restartPolicy: only "Always" on init containers`);
    }
    problems.push(...containerProblems(where, c, volumes));
  }
  return problems;
}

function containerProblems(where: string, c: Container, volumes: Set<string>): string[] {
  const problems: string[] = [];
  const portNames = new Set<string>();
  for (const [i, p] of (c.ports ?? []).entries()) {
    if (!Number.isInteger(p.containerPort) || p.containerPort < 1 || p.containerPort > 65535) {
      problems.push(`${where}.ports[${i}].containerPort: out of range ${p.containerPort}`);
    }
    if (p.protocol !== undefined && !["TCP", "UDP", "SCTP"].includes(p.protocol)) {
      problems.push(`${where}.ports[${i}].protocol: unsupported ${p.protocol}`);
    }
    if (p.name !== undefined) {
      if (p.name.length > 15 || !PORT_NAME.test(p.name)) problems.push(`${where}.ports[${i}].name: invalid ${p.name}`);
      if (portNames.has(p.name)) problems.push(`${where}.ports[${i}].name: duplicate ${p.name}`);
      portNames.add(p.name);
    }
  }
  const envNames = new Set<string>();
  for (const [i, e] of (c.env ?? []).entries()) {
    if (!e.name || e.name.includes("=")) problems.push(`${where}.env[${i}].name: invalid ${JSON.stringify(e.name)}`);
    if (e.value !== undefined && e.valueFrom !== undefined) problems.push(`${where}.env[${i}]: value and valueFrom`);
    if (e.value !== undefined && typeof e.value !== "string") problems.push(`${where}.env[${i}].value: not a string`);
    if (envNames.has(e.name)) problems.push(`${where}.env[${i}].name: duplicate ${e.name}`);
    envNames.add(e.name);
  }
  const mountPaths = new Set<string>();
  for (const [i, m] of (c.volumeMounts ?? []).entries()) {
    if (!volumes.has(m.name)) problems.push(`${where}.volumeMounts[${i}].name: no volume ${m.name}`);
    if (mountPaths.has(m.mountPath)) problems.push(`${where}.volumeMounts[${i}].mountPath: duplicate ${m.mountPath}`);
    mountPaths.add(m.mountPath);
  }
  for (const key of ["readinessProbe", "livenessProbe", "startupProbe"] as const) {
    const probe = c[key];
    if (probe) problems.push(...probeProblems(`${where}.${key}`, probe, portNames));
  }
  return problems;
}

function probeProblems(where: string, probe: Probe, portNames: Set<string>): string[] {
  const handlers = (["httpGet", "tcpSocket", "grpc", "exec"] as const).filter((h) => probe[h] !== undefined);
  if (handlers.length !== 1) return [`${where}: exactly one handler expected, found ${handlers.join(", ") || "none"}`];
  const port = probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
  if (typeof port === "string" && !portNames.has(port)) return [`${where}: no container port named ${port}`];
  if (typeof port === "number" && (port < 1 || port > 65535)) return [`${where}: port out of range ${port}`];
  return [];
}

export function assertValidPod(pod: Pod): void {
  const problems = podProblems(pod);
  assert.deepEqual(problems, [], `invalid pod:\n  ${problems.join("\n  ")}`);
}
