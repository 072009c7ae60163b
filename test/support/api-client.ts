import { Validator } from '@seriousme/openapi-schema-validator';
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** One OpenAPI document with what checking it and validating against it cost once. */
interface LoadedDocument {
  readonly document: Record<string, unknown>;
  /** The standard OpenAPI validator's verdict on the document. */
  readonly verdict: ReturnType<Validator['validate']>;
  readonly ajv: Ajv2020;
  /** Response validators by schema pointer, compiled on first use. */
  readonly validators: Map<string, ValidateFunction>;
}

/**
 * The documents loaded in this process, by their text: the servers of a suite mostly serve the
 * same document, and compiling its schemas (Ajv) per client was most of a client's cost. The same
 * bytes get the same verdict and the same validators, so every client still checks all it did.
 */
const loadedDocuments = new Map<string, LoadedDocument>();

function loadedDocument(text: string): LoadedDocument {
  let loaded = loadedDocuments.get(text);
  if (!loaded) {
    const document = JSON.parse(text) as Record<string, unknown>;
    const verdict = new Validator().validate(document);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...document, $id: 'openapi' });
    loaded = { document, verdict, ajv, validators: new Map() };
    loadedDocuments.set(text, loaded);
  }
  return loaded;
}

/**
 * A client for black-box tests: real HTTP to a running server. Every JSON response it receives is
 * validated against the server's own OpenAPI document.
 */
export class ApiClient {
  private loaded: LoadedDocument | undefined;
  validated = 0;

  constructor(readonly baseUrl: string) {}

  /** Loads /v1/openapi.json, checks it with a standard OpenAPI validator, and keeps it. */
  async loadOpenApi(): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.baseUrl}/v1/openapi.json`);
    const loaded = loadedDocument(await response.text());
    const result = await loaded.verdict;
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    this.loaded = loaded;
    return loaded.document;
  }

  async request(path: string, init: RequestInit = {}): Promise<ApiResponse> {
    const response = await fetch(`${this.baseUrl}${path}`, init);
    const text = await response.text();
    let json: unknown = undefined;
    if (text !== '') json = JSON.parse(text);
    if (json !== undefined && this.loaded)
      this.validate(this.loaded, path, init.method ?? 'GET', response.status, json);
    return { status: response.status, headers: response.headers, text, json };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request(path, { headers });
  }

  private validate(
    { document, ajv, validators }: LoadedDocument,
    path: string,
    method: string,
    status: number,
    json: unknown,
  ): void {
    const route = path.split('?')[0]!.replace(/\/+$/, '') || '/';
    const paths = document.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown> }>
    >;
    const operation = paths[route]?.[method.toLowerCase()];
    // Responses outside any documented operation (unknown paths, 405s) must still be Errors.
    const pointer = operation?.responses[String(status)]
      ? `openapi#/paths/${escape(route)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`
      : 'openapi#/components/schemas/Error';
    const validate = validators.get(pointer) ?? ajv.compile({ $ref: pointer });
    validators.set(pointer, validate);
    const ok = validate(json);
    expect(
      ok,
      `${method} ${path} -> ${status} does not match ${pointer}: ${JSON.stringify(validate.errors)}`,
    ).toBe(true);
    this.validated++;
  }
}

const escape = (route: string) => route.replaceAll('~', '~0').replaceAll('/', '~1');
