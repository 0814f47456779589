/**
 * The models as the SQL path sees them: each model's fields (scalars and relations, with the columns
 * a relation joins on) and unique keys, from the datamodel Pothos' generator writes
 * (prisma/generated/pothos-types.ts). A field's name is its column's name and a model's name its
 * table's: the schema has no `@map` or `@@map` (test/integration/sql-fence.test.ts).
 */
import { getDatamodel } from "../prisma/generated/pothos-types.js";

/** A field of a model: a scalar (its column) or a relation (`kind` "object"). */
export interface FieldInfo {
  name: string;
  type: string;
  kind: string;
  isList: boolean;
  isId: boolean;
  relationName?: string;
  relationFromFields?: string[];
}

/** A model: its fields by name, its scalars in order, whether it has an `id`, its compound unique keys. */
export interface ModelInfo {
  name: string;
  fields: Map<string, FieldInfo>;
  scalars: FieldInfo[];
  hasId: boolean;
  /** the fields of each `@@unique` of the model, in their order */
  uniqueKeys: string[][];
}

/** Every model of prisma/schema.prisma by name. */
export const MODELS = new Map<string, ModelInfo>(
  Object.entries(
    getDatamodel().datamodel.models as unknown as Record<
      string,
      { fields: FieldInfo[]; uniqueIndexes: { fields: string[] }[] }
    >,
  ).map(([name, m]) => [
    name,
    {
      name,
      fields: new Map(m.fields.map((f) => [f.name, f])),
      scalars: m.fields.filter((f) => f.kind !== "object"),
      hasId: m.fields.some((f) => f.name === "id" && f.isId),
      uniqueKeys: m.uniqueIndexes.map((u) => u.fields),
    },
  ]),
);

/** The Prisma delegate name of a model (`Invoice` -> `invoice`) and back. */
export const MODEL_OF_DELEGATE = new Map(
  [...MODELS.keys()].map((name) => [name[0].toLowerCase() + name.slice(1), name]),
);
