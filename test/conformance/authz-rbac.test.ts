// The authz-rbac corpus, one subtest per case (see testing.ts).
import { authzRbac } from "./authz-rbac.ts";
import { testCorpus } from "./testing.ts";

testCorpus(authzRbac);
