import { describeStackFileChecks } from "./helpers/stack-file-checks";

// The committed dev stack file, run as `pulumi up` would read it: policy pack and strict schema validation.
describeStackFileChecks("dev");
