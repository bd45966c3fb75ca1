import path from "node:path";
import { Enum, type Field, Type } from "protobufjs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { modelConfigSchema } from "../../../../server/core/model-config/schema";

const TYPES_FILE = path.resolve(__dirname, "../../../../server/core/model-config/model-config.ts");

const NUMERIC_PROTO_TYPES = new Set([
  "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64", "float", "double",
]);

/**
 * Walks the TypeScript `ModelConfig` type of server/core/model-config/model-config.ts against the
 * `inference.ModelConfig` message of protocol/proto/model_config.proto, message by message, and lists every
 * disagreement: a property the message lacks, a field the type lacks, a kind that does not match (string,
 * number, boolean, enum names, nested message, repeated as an array, map as a string-keyed record), or
 * presence that does not (message fields and oneof members optional, every other field always present).
 */
function typeMismatches(): string[] {
  const program = ts.createProgram([TYPES_FILE], { strict: true, noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(TYPES_FILE)!;
  const declaration = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === "ModelConfig")!;
  const problems: string[] = [];

  const literalsOf = (type: ts.Type): string[] | undefined => {
    const members = type.isUnion() ? type.types : [type];
    return members.every((m) => m.isStringLiteral()) ? members.map((m) => (m as ts.StringLiteralType).value) : undefined;
  };

  const checkSingle = (type: ts.Type, field: Field, where: string): void => {
    const resolved = field.resolvedType;
    if (resolved instanceof Type) {
      checkMessage(type, resolved, where);
    } else if (resolved instanceof Enum) {
      const literals = literalsOf(type);
      if (literals === undefined) problems.push(`${where}: ${checker.typeToString(type)} is not a union of ${resolved.name} value names`);
      else if ([...literals].sort().join() !== Object.keys(resolved.values).sort().join()) {
        problems.push(`${where}: names ${literals.join("|")}, ${resolved.name} has ${Object.keys(resolved.values).join("|")}`);
      }
    } else {
      const flags = type.flags;
      const compatible = field.type === "string" ? (flags & ts.TypeFlags.String) !== 0
        : field.type === "bool" ? (flags & ts.TypeFlags.Boolean) !== 0 || (type.isUnion() && type.types.every((t) => (t.flags & ts.TypeFlags.BooleanLiteral) !== 0))
          : NUMERIC_PROTO_TYPES.has(field.type) ? (flags & ts.TypeFlags.Number) !== 0 : false;
      if (!compatible) problems.push(`${where}: ${checker.typeToString(type)} does not hold a proto ${field.type}`);
    }
  };

  const checkField = (property: ts.Symbol, field: Field, where: string): void => {
    field.resolve();
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    const hasPresence = !field.repeated && !field.map && (field.resolvedType instanceof Type || field.partOf !== null);
    if (optional !== hasPresence) problems.push(`${where}: ${optional ? "optional" : "always present"}, but the proto field ${hasPresence ? "has" : "has no"} presence`);
    const type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration));
    if (field.map) {
      const value = checker.getIndexTypeOfType(type, ts.IndexKind.String);
      if (value === undefined) problems.push(`${where}: ${checker.typeToString(type)} is not a string-keyed record, the proto field is a map`);
      else checkSingle(value, field, `${where}[key]`);
    } else if (field.repeated) {
      if (!checker.isArrayType(type)) problems.push(`${where}: ${checker.typeToString(type)} is not an array, the proto field is repeated`);
      else checkSingle(checker.getTypeArguments(type as ts.TypeReference)[0]!, field, `${where}[]`);
    } else {
      checkSingle(type, field, where);
    }
  };

  const checkMessage = (type: ts.Type, message: Type, where: string): void => {
    const properties = checker.getPropertiesOfType(type);
    for (const property of properties) {
      const field = message.fields[property.name];
      if (field === undefined) problems.push(`${where}.${property.name}: no such field in ${message.fullName.slice(1)}`);
      else checkField(property, field, `${where}.${property.name}`);
    }
    for (const field of message.fieldsArray) {
      if (!properties.some((p) => p.name === field.name)) problems.push(`${where}.${field.name}: field of ${message.fullName.slice(1)} missing from the type`);
    }
  };

  checkMessage(checker.getTypeAtLocation(declaration), modelConfigSchema().modelConfigType, "ModelConfig");
  return problems;
}

describe("the ModelConfig TypeScript types", () => {
  it("match inference.ModelConfig in model_config.proto field by field: names, kinds and presence", () => {
    expect(typeMismatches()).toEqual([]);
  });
});
