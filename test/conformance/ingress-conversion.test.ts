// The ingress-conversion corpus, one subtest per case (see testing.ts).
import { ingressConversion } from "./ingress-conversion.ts";
import { testCorpus } from "./testing.ts";

testCorpus(ingressConversion);
