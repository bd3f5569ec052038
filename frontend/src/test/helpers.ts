import { screen, within } from '@testing-library/react'
import userEvent, { type UserEvent } from '@testing-library/user-event'
import { http, HttpResponse, type HttpHandler } from 'msw'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import type { User } from '@/types/api'
import { renderApp } from './render'
import { server } from './server'

/* What the screen tests do again and again: sign in, open a screen or a dialog, answer and record a call, fill fields. */

/** Signed in as `user` (root unless told), with `handlers` answering before any other feature's. */
export function signInAs(user: User = mockRoot, handlers: readonly HttpHandler[] = []) {
  resetAuthMocks(user)
  setUser(user)
  if (handlers.length > 0) server.use(...handlers)
}

/** The API's envelope around `data`. */
export const ok = (data: unknown = null, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })

/**
 * Answers every `method` call of `path` with `data` and keeps each one's JSON body, in order:
 * the last one is `.at(-1)`.
 */
export function recordBodies<B = unknown>(method: 'post' | 'put' | 'patch', path: string, data: unknown = null, status = 200): B[] {
  const bodies: B[] = []
  server.use(
    http[method](path, async ({ request }) => {
      bodies.push((await request.json()) as B)
      return ok(data, status)
    }),
  )
  return bodies
}

/** The app at `route`, and a user to drive it. */
export function openScreen(route: string) {
  const view = renderApp(route)
  return { ...view, user: userEvent.setup() }
}

/** The app at `route` with the dialog `dialogTestId` opened by clicking `trigger` (a test id). */
export async function openDialog(route: string, trigger: string, dialogTestId: string) {
  const { user, ...view } = openScreen(route)
  await user.click(await screen.findByTestId(trigger))
  return { ...view, user, dialog: await screen.findByTestId(dialogTestId) }
}

/** Types each value into the field its label names, inside `scope`. */
export async function typeInto(user: UserEvent, scope: HTMLElement, fields: Record<string, string>) {
  for (const [label, value] of Object.entries(fields)) await user.type(within(scope).getByLabelText(label), value)
}
