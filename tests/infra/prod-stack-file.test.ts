import { describeStackFileChecks } from "./helpers/stack-file-checks";

// The committed production example, run as `pulumi up` would read it: policy pack and strict schema validation.
describeStackFileChecks("prod");
