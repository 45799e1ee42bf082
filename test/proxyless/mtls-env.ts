// Imported first by the mTLS tests: grpc-js-xds reads GRPC_XDS_EXPERIMENTAL_RBAC when it loads, and
// its servers enforce RBAC filters only with it on.
process.env.GRPC_XDS_EXPERIMENTAL_RBAC = "true";
