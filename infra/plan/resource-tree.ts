import { type DeclaredResource } from "./recording-mocks";

/** A declared resource and the resources declared inside it. */
export interface ResourceNode {
  readonly resource: DeclaredResource;
  readonly children: ResourceNode[];
}

/** How many resources a part of the stack declares. */
export interface ResourceCount {
  /** Every resource, components included. */
  readonly total: number;
  /** Cloud and Kubernetes resources only (what the providers create). */
  readonly custom: number;
  readonly byType: Readonly<Record<string, number>>;
}

const STACK_TYPE = "pulumi:pulumi:Stack";
const REGION_TYPE = "gpu-inference:region:Region";

/**
 * Arranges resources under their components. The parent is the component whose name is the longest
 * `<name>-` prefix of the child's (the program's naming rule), never one of the child's own type (a second
 * continent's `<prefix>-models-europe` is a sibling of `<prefix>-models`); anything else hangs off the stack.
 */
export function buildResourceTree(resources: readonly DeclaredResource[]): ResourceNode {
  const stack = resources.find((resource) => resource.type === STACK_TYPE);
  if (stack === undefined) throw new Error("no stack resource was declared");
  const nodes = new Map(resources.map((resource) => [resource, { resource, children: [] as ResourceNode[] }]));
  const components = resources.filter((resource) => !resource.custom && resource !== stack);
  for (const resource of resources) {
    if (resource === stack) continue;
    const parent = components
      .filter((component) => component.type !== resource.type && resource.name.startsWith(`${component.name}-`))
      .reduce<DeclaredResource>((best, component) => (best === stack || component.name.length > best.name.length ? component : best), stack);
    nodes.get(parent)?.children.push(nodes.get(resource) as ResourceNode);
  }
  return nodes.get(stack) as ResourceNode;
}

function flatten(node: ResourceNode): DeclaredResource[] {
  return [node.resource, ...node.children.flatMap(flatten)];
}

function count(resources: readonly DeclaredResource[]): ResourceCount {
  const byType: Record<string, number> = {};
  for (const resource of resources) byType[resource.type] = (byType[resource.type] ?? 0) + 1;
  return { total: resources.length, custom: resources.filter((resource) => resource.custom).length, byType };
}

/** Resource counts per region (each Region component's subtree) and for the global rest (without the stack). */
export function countResourcesByScope(tree: ResourceNode): { readonly global: ResourceCount; readonly regions: Readonly<Record<string, ResourceCount>> } {
  const regions: Record<string, ResourceCount> = {};
  const global: DeclaredResource[] = [];
  for (const child of tree.children) {
    if (child.resource.type === REGION_TYPE) regions[child.resource.name] = count(flatten(child));
    else global.push(...flatten(child));
  }
  return { global: count(global), regions };
}
