import { describe, expect, it } from 'vitest';
import { API_ERRORS, ApiError, errorBody } from './errors.js';

describe('API_ERRORS', () => {
  it('gives every error its own name as a stable code, outside the /v1 body', () => {
    const codes = new Set<string>();
    for (const [name, make] of Object.entries(API_ERRORS)) {
      const error = (make as (...args: unknown[]) => ApiError)(
        name === 'framework' ? 415 : 'x',
        'x',
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe(name);
      codes.add(error.code);
      expect(Object.keys(errorBody(error)).sort()).toEqual(
        error.hint === undefined ? ['error'] : ['error', 'hint'],
      );
    }
    expect(codes.size).toBe(Object.keys(API_ERRORS).length);
  });

  it('leaves an error in a peer API’s own words as peer', () => {
    expect(new ApiError('peer', 400, 'invalid zone').code).toBe('peer');
  });
});
