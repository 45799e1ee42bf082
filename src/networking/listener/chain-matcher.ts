// Filter chain matchers (Istio's networking/core/match): a tree of `xds.type.matcher.v3.Matcher`s over
// the connection's destination IP, destination port or detected application protocol, whose leaves
// name the filter chain to use. A waypoint's main_internal listener picks its chains with one.
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { networkInputs, packAny, xdsCore, xdsMatcher } from "../../api/index.ts";

type OnMatch = xdsMatcher.Matcher_OnMatch;

const DESTINATION_IP_INPUT = create(xdsCore.TypedExtensionConfigSchema, {
  name: "ip",
  typedConfig: packAny(networkInputs.DestinationIPInputSchema, create(networkInputs.DestinationIPInputSchema)),
});
const DESTINATION_PORT_INPUT = create(xdsCore.TypedExtensionConfigSchema, {
  name: "port",
  typedConfig: packAny(networkInputs.DestinationPortInputSchema, create(networkInputs.DestinationPortInputSchema)),
});
const APPLICATION_PROTOCOL_INPUT = create(xdsCore.TypedExtensionConfigSchema, {
  name: "application-protocol",
  typedConfig: packAny(
    networkInputs.ApplicationProtocolInputSchema,
    create(networkInputs.ApplicationProtocolInputSchema),
  ),
});

/** The leaf that picks the filter chain `name` (Istio's match.ToChain). */
export function toChain(name: string): OnMatch {
  return create(xdsMatcher.Matcher_OnMatchSchema, {
    onMatch: {
      case: "action",
      value: create(xdsCore.TypedExtensionConfigSchema, {
        name,
        typedConfig: packAny(StringValueSchema, create(StringValueSchema, { value: name })),
      }),
    },
  });
}

/** A branch going on to `matcher` (Istio's match.ToMatcher). */
export function toMatcher(matcher: xdsMatcher.Matcher): OnMatch {
  return create(xdsMatcher.Matcher_OnMatchSchema, { onMatch: { case: "matcher", value: matcher } });
}

/** A matcher on the destination port: each port (as text) to what follows. */
export function destinationPortMatcher(byPort: ReadonlyMap<number, OnMatch>): xdsMatcher.Matcher {
  const map: Record<string, OnMatch> = {};
  for (const [port, onMatch] of byPort) map[String(port)] = onMatch;
  return exactMatcher(DESTINATION_PORT_INPUT, map);
}

/**
 * A matcher on the protocol http_inspector detected (Istio's match.NewAppProtocol): plaintext HTTP/1.1
 * and h2c to `http`, anything else to `tcp`.
 */
export function appProtocolMatcher(chains: { tcp: OnMatch; http: OnMatch }): xdsMatcher.Matcher {
  const matcher = exactMatcher(APPLICATION_PROTOCOL_INPUT, { "'h2c'": chains.http, "'http/1.1'": chains.http });
  matcher.onNoMatch = chains.tcp;
  return matcher;
}

/** One range matcher of an IP matcher: the CIDRs (address and prefix length) and what follows them. */
export interface IpRangeBranch {
  cidrs: readonly { address: string; prefixLen: number }[];
  onMatch: OnMatch;
}

/** A matcher on the destination IP: the first branch with a range holding it decides. */
export function destinationIpMatcher(branches: readonly IpRangeBranch[]): xdsMatcher.Matcher {
  const ipMatcher = create(xdsMatcher.IPMatcherSchema, {
    rangeMatchers: branches.map((branch) =>
      create(xdsMatcher.IPMatcher_IPRangeMatcherSchema, {
        ranges: branch.cidrs.map((c) =>
          create(xdsCore.CidrRangeSchema, { addressPrefix: c.address, prefixLen: c.prefixLen }),
        ),
        onMatch: branch.onMatch,
      }),
    ),
  });
  return create(xdsMatcher.MatcherSchema, {
    matcherType: {
      case: "matcherTree",
      value: {
        input: DESTINATION_IP_INPUT,
        treeType: {
          case: "customMatch",
          value: { name: "ip", typedConfig: packAny(xdsMatcher.IPMatcherSchema, ipMatcher) },
        },
      },
    },
  });
}

function exactMatcher(input: xdsCore.TypedExtensionConfig, map: Record<string, OnMatch>): xdsMatcher.Matcher {
  return create(xdsMatcher.MatcherSchema, {
    matcherType: { case: "matcherTree", value: { input, treeType: { case: "exactMatchMap", value: { map } } } },
  });
}
