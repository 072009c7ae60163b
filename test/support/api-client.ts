import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/**
 * A client for black-box tests: real HTTP to a running server. Every JSON response it receives is
 * validated against the server's own OpenAPI document.
 */
export class ApiClient {
  private validators = new Map<string, (data: unknown) => boolean>();
  private ajv = new Ajv2020({ strict: false, allErrors: true });
  private document: Record<string, unknown> | undefined;
  validated = 0;

  constructor(readonly baseUrl: string) {
    addFormats.default(this.ajv);
  }

  /** Loads /v1/openapi.json, checks it with a standard OpenAPI validator, and keeps it. */
  async loadOpenApi(): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.baseUrl}/v1/openapi.json`);
    const document = (await response.json()) as Record<string, unknown>;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    this.ajv.addSchema({ ...document, $id: 'openapi' });
    this.document = document;
    return document;
  }

  async request(path: string, init: RequestInit = {}): Promise<ApiResponse> {
    const response = await fetch(`${this.baseUrl}${path}`, init);
    const text = await response.text();
    let json: unknown = undefined;
    if (text !== '') json = JSON.parse(text);
    if (json !== undefined && this.document)
      this.validate(path, init.method ?? 'GET', response.status, json);
    return { status: response.status, headers: response.headers, text, json };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.request(path, { headers });
  }

  private validate(path: string, method: string, status: number, json: unknown): void {
    const route = path.split('?')[0]!.replace(/\/+$/, '') || '/';
    const paths = this.document!.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown> }>
    >;
    const operation = paths[route]?.[method.toLowerCase()];
    // Responses outside any documented operation (unknown paths, 405s) must still be Errors.
    const pointer = operation?.responses[String(status)]
      ? `openapi#/paths/${escape(route)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`
      : 'openapi#/components/schemas/Error';
    const validate = this.validators.get(pointer) ?? this.ajv.compile({ $ref: pointer });
    this.validators.set(pointer, validate);
    const ok = validate(json);
    expect(
      ok,
      `${method} ${path} -> ${status} does not match ${pointer}: ${JSON.stringify((validate as unknown as { errors: unknown }).errors)}`,
    ).toBe(true);
    this.validated++;
  }
}

const escape = (route: string) => route.replaceAll('~', '~0').replaceAll('/', '~1');
