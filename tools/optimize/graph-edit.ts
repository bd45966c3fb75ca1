import { ATTRIBUTE_TYPE, type OnnxAttribute, type OnnxGraph, type OnnxNode, type OnnxTensor } from "./onnx-model";

/** Nodes reading each value, for rewiring: value name -> the nodes that take it as an input. */
export function consumersOf(graph: OnnxGraph): Map<string, OnnxNode[]> {
  const consumers = new Map<string, OnnxNode[]>();
  for (const node of graph.node) {
    for (const input of node.input) {
      if (input === "") continue;
      const list = consumers.get(input) ?? [];
      if (!list.includes(node)) list.push(node);
      consumers.set(input, list);
    }
  }
  return consumers;
}

/** The node producing each value. */
export function producersOf(graph: OnnxGraph): Map<string, OnnxNode> {
  const producers = new Map<string, OnnxNode>();
  for (const node of graph.node) for (const output of node.output) producers.set(output, node);
  return producers;
}

export function initializerMap(graph: OnnxGraph): Map<string, OnnxTensor> {
  return new Map(graph.initializer.map((tensor) => [tensor.name, tensor]));
}

export function isGraphOutput(graph: OnnxGraph, name: string): boolean {
  return graph.output.some((output) => output.name === name);
}

/** Names not used in the graph yet, derived from a base name (`base`, `base_1`, ...). */
export class NameAllocator {
  private readonly used = new Set<string>();

  constructor(graph: OnnxGraph) {
    for (const node of graph.node) {
      for (const name of [...node.input, ...node.output]) this.used.add(name);
      if (node.name !== undefined) this.used.add(node.name);
    }
    for (const value of [...graph.input, ...graph.output, ...graph.initializer]) this.used.add(value.name);
  }

  next(base: string): string {
    let name = base;
    for (let suffix = 1; this.used.has(name); suffix++) name = `${base}_${suffix}`;
    this.used.add(name);
    return name;
  }
}

export function attribute(node: OnnxNode, name: string): OnnxAttribute | undefined {
  return node.attribute.find((attr) => attr.name === name);
}

export function intAttribute(node: OnnxNode, name: string, fallback: number): number {
  return attribute(node, name)?.i ?? fallback;
}

export function floatAttribute(node: OnnxNode, name: string, fallback: number): number {
  return attribute(node, name)?.f ?? fallback;
}

export function intAttr(name: string, value: number): OnnxAttribute {
  return { name, type: ATTRIBUTE_TYPE.INT, i: value, floats: [], ints: [] };
}

/** A node in the default domain (or `domain`), named after its first output unless `name` is given. */
export function makeNode(opType: string, input: string[], output: string[], attributes: OnnxAttribute[] = [], name?: string): OnnxNode {
  return { name: name ?? output[0] ?? opType, op_type: opType, input, output, attribute: attributes };
}

/**
 * Orders the nodes so that each comes after the producers of its inputs (ONNX requires topological order); passes
 * append the nodes they add at the end and let this put them in place. Stable: already-ordered nodes keep their order.
 */
export function sortTopologically(graph: OnnxGraph): void {
  const available = new Set<string>([...graph.input.map((v) => v.name), ...graph.initializer.map((t) => t.name), ""]);
  const pending = [...graph.node];
  const sorted: OnnxNode[] = [];
  while (pending.length > 0) {
    const index = pending.findIndex((node) => node.input.every((input) => available.has(input)));
    if (index < 0) throw new Error(`graph has a cycle or reads undefined values at node ${pending[0]!.name ?? pending[0]!.op_type}`);
    const [node] = pending.splice(index, 1) as [OnnxNode];
    sorted.push(node);
    for (const output of node.output) available.add(output);
  }
  graph.node = sorted;
  uniquifyNodeNames(graph);
}

/** ONNX Runtime rejects two nodes of one name; the nodes passes add are named after their outputs, which may repeat a name. */
function uniquifyNodeNames(graph: OnnxGraph): void {
  const seen = new Set<string>();
  for (const node of graph.node) {
    let name = node.name ?? node.output[0] ?? node.op_type;
    for (let suffix = 1; seen.has(name); suffix++) name = `${node.name ?? node.op_type}_${suffix}`;
    seen.add(name);
    node.name = name;
  }
}
