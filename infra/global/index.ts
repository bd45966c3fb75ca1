export { restrictedApiKey } from "./admin-key";
export { LoadBalancer, type LoadBalancerArgs, type ServingBackends } from "./load-balancer";
export { ModelBucket, type ModelBucketArgs } from "./model-bucket";
export { listModelRepositoryFiles, type ModelRepositoryFile } from "./model-repository-files";
export { ProjectServices, type ProjectServicesArgs } from "./project-services";
export { ServerImage, type ServerImageArgs } from "./server-image";
export { ServiceAccounts, type ServiceAccountsArgs } from "./service-accounts";
export { Vpc, type VpcArgs } from "./vpc";
export { WorkloadIdentityBinding, type WorkloadIdentityBindingArgs } from "./workload-identity-binding";
