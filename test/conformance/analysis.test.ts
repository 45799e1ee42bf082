// The analysis corpus, one subtest per case of EXPECTED.yaml; the summary prints the pass count.
import { analysis } from "./analysis.ts";
import { testCorpus } from "./testing.ts";

testCorpus(analysis);
