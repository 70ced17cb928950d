// Checks real answers against the published OpenAPI document: each request names its operation,
// and the answer's status, media type and body must be one that operation documents.
import { dereference } from "@readme/openapi-parser";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";

type Json = Record<string, unknown>;
type MediaTypes = Record<string, { schema: Json }>;
type Operation = {
  operationId: string;
  responses: Record<
    string,
    { content?: MediaTypes; headers?: Record<string, { required?: boolean; schema: Json }> }
  >;
};
const METHODS = ["get", "post", "put", "patch", "delete"] as const;

export interface Exercised {
  status: number;
  body: any;
}

export class ConformanceChecker {
  private readonly operations = new Map<string, { method: string; path: string; op: Operation }>();
  private readonly exercised = new Set<string>();
  private readonly validators = new Map<Json, ValidateFunction>();
  // Formats (date-time…) are descriptions here; the shapes are what the test holds the server to.
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });

  private constructor(
    private readonly base: string,
    document: Json,
  ) {
    for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
      for (const method of METHODS) {
        const op = item[method] as Operation | undefined;
        if (op !== undefined) this.operations.set(op.operationId, { method, path, op });
      }
    }
  }

  /** `document` is the answer of /openapi.json; its $refs are resolved before any check. */
  static async create(base: string, document: Json): Promise<ConformanceChecker> {
    const resolved = await dereference(structuredClone(document) as never);
    return new ConformanceChecker(base, resolved as unknown as Json);
  }

  operationIds(): string[] {
    return [...this.operations.keys()].sort();
  }

  notExercised(): string[] {
    return this.operationIds().filter((id) => !this.exercised.has(id));
  }

  private validator(schema: Json): ValidateFunction {
    let validate = this.validators.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /**
   * Sends one request to `operationId` and throws unless the answer has the status `expected`,
   * that status is documented, and the body matches its documented media type and schema.
   */
  async call(
    operationId: string,
    expected: number,
    options: {
      params?: Record<string, string>;
      query?: Record<string, string | number>;
      body?: unknown;
      /** Sent as it is (a full output's part), with `headers`. */
      raw?: Uint8Array;
      headers?: Record<string, string>;
      token?: string | null;
    } = {},
  ): Promise<Exercised> {
    const found = this.operations.get(operationId);
    if (found === undefined) throw new Error(`${operationId} is not in the document`);
    const path = found.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = options.params?.[name];
      if (value === undefined) throw new Error(`${operationId}: no value for {${name}}`);
      return encodeURIComponent(value);
    });
    const query = new URLSearchParams(
      Object.entries(options.query ?? {}).map(([key, value]): [string, string] => [
        key,
        String(value),
      ]),
    ).toString();
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${this.base}${path}${query === "" ? "" : `?${query}`}`, {
      method: found.method.toUpperCase(),
      headers,
      body: options.body === undefined ? options.raw : JSON.stringify(options.body),
    });
    const text = await response.text();
    const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
    const where = `${operationId} answered ${response.status} ${text.slice(0, 300)}`;
    if (response.status !== expected) throw new Error(`${where}; expected ${expected}`);
    const documented =
      found.op.responses[String(response.status)] ??
      found.op.responses[`${String(response.status)[0]}XX`];
    if (documented === undefined) throw new Error(`${where}: status not documented`);
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const value = response.headers.get(name);
      if (value === null) {
        if (header.required) throw new Error(`${where}: header ${name} missing`);
      } else if (!this.validator(header.schema)(value)) {
        throw new Error(`${where}: header ${name}: ${value} does not match its schema`);
      }
    }
    // Bytes (a full output) are checked by media type only; their schema is `format: binary`.
    const binary = mediaType === "application/octet-stream";
    const body = text === "" ? null : binary ? text : JSON.parse(text);
    const content = documented.content;
    if (content === undefined) {
      if (text !== "") throw new Error(`${where}: documented without a body`);
    } else {
      const media = content[mediaType];
      if (media === undefined) throw new Error(`${where}: media type ${mediaType} not documented`);
      if (binary) {
        this.exercised.add(operationId);
        return { status: response.status, body };
      }
      const validate = this.validator(media.schema);
      if (!validate(body)) {
        throw new Error(
          `${where}: does not match its schema: ${this.ajv.errorsText(validate.errors)}`,
        );
      }
    }
    this.exercised.add(operationId);
    return { status: response.status, body };
  }
}
