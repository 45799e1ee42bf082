// Locality-aware load balancing on a load assignment (Istio's loadbalancer.go): endpoints grouped by
// locality; with outlier detection, failover priorities (same subzone 0, zone 1, region 2, elsewhere 3,
// regions a failover rule excludes 4), or failoverPriority labels; or `distribute` weights instead.
import type { endpoint } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type {
  DestinationRuleTrafficPolicyLoadBalancerLocalityLbSettingDistribute as Distribute,
  DestinationRuleTrafficPolicyLoadBalancerLocalityLbSettingFailover as Failover,
  DestinationRuleTrafficPolicyLoadBalancerLocalityLbSetting as LocalityLbSetting,
} from "../../config/types/index.ts";
import type { Labels } from "../../krt/index.ts";
import type { Locality } from "../../model/index.ts";

/** One endpoint in a locality group, with the labels failoverPriority compares. */
export interface GroupMember {
  lb: endpoint.LbEndpoint;
  weight: number;
  labels: Labels;
}

export interface LocalityGroup {
  locality: Locality;
  members: GroupMember[];
  /** The group's weight: the sum of its members' unless `distribute` set it; none for a group left empty. */
  weight: number | undefined;
  priority: number;
}

/** `region/zone/subzone` → its parts ("" for the missing ones). */
export function parseLocality(text: string): Locality {
  const [region = "", zone = "", subZone = ""] = text.split("/");
  return { region, zone, subZone };
}

/** Groups members by locality text, in sorted locality order (Istio sorts the locality keys). */
export function groupByLocality(items: readonly { locality: string; member: GroupMember }[]): LocalityGroup[] {
  const byKey = new Map<string, GroupMember[]>();
  for (const { locality, member } of items) {
    const list = byKey.get(locality);
    if (list) list.push(member);
    else byKey.set(locality, [member]);
  }
  return [...byKey.keys()].sort().map((key) => {
    const members = byKey.get(key) ?? [];
    return { locality: parseLocality(key), members, weight: sumWeights(members), priority: 0 };
  });
}

function sumWeights(members: readonly GroupMember[]): number {
  return members.reduce((total, m) => total + m.weight, 0);
}

/**
 * The locality setting in force (Istio's GetLocalityLbSetting): the DestinationRule's unless it is
 * disabled, else the mesh's unless that is disabled.
 */
export function localityLbSetting(
  mesh: MeshConfig,
  rule: LocalityLbSetting | undefined,
): LocalityLbSetting | undefined {
  if (rule) return rule.enabled === false ? undefined : rule;
  const meshSetting = mesh.localityLbSetting as LocalityLbSetting | undefined;
  if (!meshSetting || meshSetting.enabled === false) return undefined;
  return meshSetting;
}

export interface LocalityLbContext {
  setting: LocalityLbSetting | undefined;
  /** Failover only with outlier detection: without it Envoy never leaves priority 0. */
  outlierDetection: boolean;
  proxyLocality: Locality;
  proxyLabels: Labels;
  /** Istio applies failoverPriority labels to EDS only, not to the endpoints DNS clusters carry inline. */
  skipFailoverPriority?: boolean;
}

/** Applies distribute, failoverPriority and failover to the groups (Istio's ApplyLocalityLoadBalancer). */
export function applyLocalityLb(groups: LocalityGroup[], ctx: LocalityLbContext): LocalityGroup[] {
  const setting = ctx.setting;
  if (!setting) return groups;
  if (setting.distribute && setting.distribute.length > 0) {
    return applyDistribute(groups, ctx.proxyLocality, setting.distribute);
  }
  if (!ctx.outlierDetection) return groups;
  let out = groups;
  if (setting.failoverPriority && setting.failoverPriority.length > 0) {
    if (!ctx.skipFailoverPriority) out = applyFailoverPriority(out, ctx.proxyLabels, setting.failoverPriority);
    if (setting.failover && setting.failover.length > 0) out = applyFailover(out, ctx.proxyLocality, setting.failover);
    return out;
  }
  return applyFailover(out, ctx.proxyLocality, setting.failover ?? []);
}

/** Istio's LocalityMatch: a rule `region/zone/subzone` where `*` (or a missing part below region) matches anything. */
export function localityMatch(locality: Locality, rule: string): boolean {
  const r = parseLocality(rule);
  return (
    (r.region === "*" || locality.region === r.region) &&
    (r.zone === "*" || r.zone === "" || locality.zone === r.zone) &&
    (r.subZone === "*" || r.subZone === "" || locality.subZone === r.subZone)
  );
}

/** Istio's LbPriority: 0 same subzone, 1 same zone, 2 same region, 3 other region. */
export function localityPriority(proxy: Locality, ep: Locality): number {
  if (proxy.region !== ep.region) return 3;
  if (proxy.zone !== ep.zone) return 2;
  if (proxy.subZone !== ep.subZone) return 1;
  return 0;
}

/** The first rule whose `from` matches the proxy sets the weights; localities it does not name get no endpoints. */
function applyDistribute(groups: LocalityGroup[], proxy: Locality, distribute: readonly Distribute[]): LocalityGroup[] {
  const rule = distribute.find((d) => localityMatch(proxy, d.from ?? ""));
  if (!rule) return groups;
  const weights = new Map<number, number>();
  const unmatched = new Set(groups.map((_, i) => i));
  for (const [target, weight] of Object.entries(rule.to ?? {})) {
    const matched: number[] = [];
    for (const i of unmatched) if (localityMatch(groups[i].locality, target)) matched.push(i);
    let total = 0;
    for (const i of matched) {
      unmatched.delete(i);
      total += groups[i].weight ?? 0;
    }
    // A wildcard target shares its weight among the localities it matches, in proportion to theirs.
    for (const i of matched) {
      const share = ((groups[i].weight ?? 0) * weight) / total;
      if (share > 0) weights.set(i, Math.ceil(share));
    }
  }
  return groups.map((group, i) => ({
    ...group,
    weight: weights.get(i) ?? group.weight,
    members: unmatched.has(i) ? [] : group.members,
  }));
}

/** Priorities by locality closeness, after any failoverPriority levels, renumbered from 0 without gaps. */
function applyFailover(groups: LocalityGroup[], proxy: Locality, failover: readonly Failover[]): LocalityGroup[] {
  const raw = groups.map((group) => {
    let priority = localityPriority(proxy, group.locality);
    if (priority === 3) {
      const rule = failover.find((f) => f.from === proxy.region);
      if (rule && group.locality.region !== rule.to) priority = 4;
    }
    // Five locality levels per failoverPriority level keep the earlier ordering.
    return group.priority * 5 + priority;
  });
  return renumber(groups, raw);
}

/**
 * failoverPriority: an endpoint's priority is how many of the listed labels (in order) it shares with
 * the proxy; `label=value` compares with that value instead of the proxy's. Groups split by priority.
 */
function applyFailoverPriority(
  groups: LocalityGroup[],
  proxyLabels: Labels,
  failoverPriority: readonly string[],
): LocalityGroup[] {
  if (Object.keys(proxyLabels).length === 0) return groups;
  const levels = failoverPriority.map((entry) => {
    const [label, value] = entry.split("=");
    return { label, value: entry.includes("=") ? value : proxyLabels[label] };
  });
  const split: LocalityGroup[] = [];
  for (const group of groups) {
    const byPriority = new Map<number, GroupMember[]>();
    for (const member of group.members) {
      const miss = levels.findIndex((l) => member.labels[l.label] !== l.value);
      const priority = miss === -1 ? 0 : levels.length - miss;
      const list = byPriority.get(priority);
      if (list) list.push(member);
      else byPriority.set(priority, [member]);
    }
    for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
      const members = byPriority.get(priority) ?? [];
      split.push({ locality: group.locality, members, weight: sumWeights(members), priority });
    }
  }
  return renumber(
    split,
    split.map((g) => g.priority),
  );
}

function renumber(groups: LocalityGroup[], raw: readonly number[]): LocalityGroup[] {
  const dense = new Map([...new Set(raw)].sort((a, b) => a - b).map((p, i) => [p, i]));
  return groups.map((group, i) => ({ ...group, priority: dense.get(raw[i]) ?? 0 }));
}

/** The groups as Envoy LocalityLbEndpoints (message literals, as lbendpoint.ts explains). */
export function localityLbEndpoints(groups: readonly LocalityGroup[]): endpoint.LocalityLbEndpoints[] {
  return groups.map((group) => ({
    $typeName: "envoy.config.endpoint.v3.LocalityLbEndpoints",
    locality: {
      $typeName: "envoy.config.core.v3.Locality",
      region: group.locality.region,
      zone: group.locality.zone,
      subZone: group.locality.subZone,
    },
    lbEndpoints: group.members.map((m) => m.lb),
    lbConfig: { case: undefined },
    loadBalancingWeight: group.weight,
    priority: group.priority,
  }));
}
