import type { ApiEnvelope } from '@/types/api'
import { handleUnauthorized } from './errors'

/** The server answered with a non-2xx HTTP status. */
export class HttpError extends Error {
  override name = 'HttpError'
  constructor(
    readonly status: number,
    message: string,
    /** The server's own message from the error body, if it sent one. */
    readonly serverMessage?: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

/** The server answered 2xx with `{success: false}`. */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

type Query = Record<string, string | number | boolean | null | undefined>

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  body?: unknown
  query?: Query
  signal?: AbortSignal
  headers?: Record<string, string>
}

function buildUrl(path: string, query?: Query): string {
  const url = new URL(path, window.location.origin)
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) url.searchParams.set(key, String(value))
  }
  return url.toString()
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text()
  if (!text) return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function isEnvelope(body: unknown): body is ApiEnvelope<unknown> {
  return typeof body === 'object' && body !== null && 'success' in body
}

function fieldOf(body: unknown, key: 'message' | 'code'): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const value = (body as Record<string, unknown>)[key]
  return typeof value === 'string' && value ? value : undefined
}

/**
 * Calls the Switchboard API (same origin, session cookie), unwraps `{success, message, data}`
 * and returns `data`. Throws HttpError for non-2xx statuses and ApiError for `success: false`.
 * Errors are not shown here: the query client passes them to the central handler in errors.ts.
 */
export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await requestEnvelope<T>(path, options)).data
}

/** What a successful call answered: `data`, with the envelope's `message` (some calls say something there). */
export interface Answer<T> {
  data: T
  message: string
}

/**
 * Like `request`, but also returns the envelope's `message`: the third-party sign-in answers
 * "bind" there when it bound the identity to the signed-in account instead of signing in.
 */
export async function requestEnvelope<T>(path: string, options: RequestOptions = {}): Promise<Answer<T>> {
  const { method = 'GET', body, query, signal, headers } = options
  const init: RequestInit = {
    method,
    credentials: 'include',
    headers: { Accept: 'application/json', ...headers },
    signal,
  }
  if (body !== undefined) init.body = JSON.stringify(body)
  // The server refuses a signed-in state change that is not declared JSON (its CSRF rule), so
  // every non-GET call says so, with a body or without (DELETE).
  if (body !== undefined || method !== 'GET') {
    ;(init.headers as Record<string, string>)['Content-Type'] = 'application/json'
  }

  const res = await fetch(buildUrl(path, query), init)
  const payload = await readBody(res)

  if (!res.ok) {
    if (res.status === 401) handleUnauthorized()
    const serverMessage = fieldOf(payload, 'message')
    const text = `Request failed with status code ${res.status}`
    throw new HttpError(res.status, serverMessage ?? text, serverMessage, fieldOf(payload, 'code'))
  }

  if (!isEnvelope(payload)) {
    // e.g. an HTML page where JSON was expected: never hand text to a caller typed for data.
    if (typeof payload === 'string') throw new ApiError(`Unexpected response from ${path}`)
    return { data: payload as T, message: '' }
  }
  if (!payload.success) throw new ApiError(payload.message ?? '', fieldOf(payload, 'code'))
  return { data: payload.data as T, message: payload.message ?? '' }
}

export const api = {
  get: <T>(path: string, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    request<T>(path, { ...options, method: 'GET' }),
  post: <T>(path: string, body?: unknown, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    request<T>(path, { ...options, method: 'POST', body }),
  put: <T>(path: string, body?: unknown, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    request<T>(path, { ...options, method: 'PUT', body }),
  patch: <T>(path: string, body?: unknown, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    request<T>(path, { ...options, method: 'PATCH', body }),
  delete: <T>(path: string, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    request<T>(path, { ...options, method: 'DELETE' }),
}
