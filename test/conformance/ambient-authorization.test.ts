// The ambient-authorization corpus, one subtest per case (see testing.ts).
import { ambientAuthorization } from "./ambient-authorization.ts";
import { testCorpus } from "./testing.ts";

testCorpus(ambientAuthorization);
