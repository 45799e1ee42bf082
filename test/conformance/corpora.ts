// Every conformance corpus, in report order. A new corpus is one module and one line here.
import { ambientAuthorization } from "./ambient-authorization.ts";
import { analysis } from "./analysis.ts";
import { authzRbac } from "./authz-rbac.ts";
import type { Corpus } from "./corpus.ts";
import { crdValidation } from "./crd-validation.ts";
import { gatewayApiConversion } from "./gateway-api-conversion.ts";
import { ingressConversion } from "./ingress-conversion.ts";

export const CORPORA: readonly Corpus[] = [
  crdValidation,
  authzRbac,
  gatewayApiConversion,
  ingressConversion,
  analysis,
  ambientAuthorization,
];
