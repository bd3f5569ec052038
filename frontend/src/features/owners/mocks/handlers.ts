import { http, HttpResponse } from 'msw'
import type { ModelOwner } from '../types'

/** A fake owner store: list, create, update, delete. */
let owners: ModelOwner[] = []

export function resetOwnerMocks(initial: ModelOwner[] = []): void {
  owners = initial.map((o) => ({ ...o }))
}

export const mockOwners: ModelOwner[] = [
  { id: 1, name: 'OpenAI', icon: '' },
  { id: 14, name: 'Anthropic', icon: '' },
  { id: 1000, name: 'Acme AI', icon: 'https://example.com/acme.png' },
]

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })
const fail = (message: string, status: number, code: string) =>
  HttpResponse.json({ success: false, message, code }, { status })

export const ownerHandlers = [
  http.get('*/api/model_ownedby', () => ok([...owners].sort((a, b) => a.id - b.id))),
  http.post('*/api/model_ownedby', async ({ request }) => {
    const body = (await request.json()) as ModelOwner
    if (owners.some((o) => o.id === body.id)) return fail('this id is already used', 409, 'id_taken')
    owners.push(body)
    return HttpResponse.json({ success: true, message: '' }, { status: 201 })
  }),
  http.put('*/api/model_ownedby', async ({ request }) => {
    const body = (await request.json()) as ModelOwner
    const owner = owners.find((o) => o.id === body.id)
    if (!owner) return fail('model owner not found', 404, 'not_found')
    Object.assign(owner, body)
    return ok({ id: body.id })
  }),
  http.delete('*/api/model_ownedby/:id', ({ params }) => {
    owners = owners.filter((o) => o.id !== Number(params.id))
    return ok({ id: Number(params.id) })
  }),
]
