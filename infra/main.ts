// The Pulumi program (Pulumi.yaml `main`): reads the stack's config and declares the stack.
import path from "node:path";
import { loadConfig } from "./config";
import { createStack, repositorySources } from "./stack";

const outputs = createStack(loadConfig(), repositorySources(path.resolve(__dirname, "..")));

export const url = outputs.url;
export const ipAddress = outputs.ipAddress;
export const grpcEndpoint = outputs.grpcEndpoint;
export const clusters = outputs.clusters;
export const image = outputs.image;
export const modelBucket = outputs.modelBucket;
export const adminKey = outputs.adminKey;
