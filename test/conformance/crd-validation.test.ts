// The crd-validation corpus, one subtest per case (see testing.ts).
import { crdValidation } from "./crd-validation.ts";
import { testCorpus } from "./testing.ts";

testCorpus(crdValidation);
