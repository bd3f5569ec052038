import type { TFunction } from 'i18next'
import { z } from 'zod'
import type { ModelOwner } from './types'

/** Operator-defined owners take ids from 1000 on (spec sections 5 and 9). */
export const OWNER_MIN_ID = 1000
export const OWNER_NAME_MAX = 64

export interface OwnerFormValues {
  id: string
  name: string
  icon: string
}

export function ownerFormDefaults(owner?: ModelOwner): OwnerFormValues {
  return owner ? { id: String(owner.id), name: owner.name, icon: owner.icon } : { id: '', name: '', icon: '' }
}

/** Model owner form: id a whole number >= 1000 (not checked when editing), name 1-64, icon an http(s) URL or empty. */
export function createOwnerSchema(t: TFunction, editing: boolean) {
  return z
    .object({
      id: z.string().trim(),
      name: z
        .string()
        .trim()
        .min(1, t('owners:validation.nameRequired'))
        .max(OWNER_NAME_MAX, t('owners:validation.nameTooLong', { max: OWNER_NAME_MAX })),
      icon: z.string().trim(),
    })
    .superRefine((v, ctx) => {
      if (!editing && (!/^\d+$/.test(v.id) || Number(v.id) < OWNER_MIN_ID)) {
        ctx.addIssue({ code: 'custom', path: ['id'], message: t('owners:validation.idMin', { min: OWNER_MIN_ID }) })
      }
      if (v.icon && !/^https?:\/\/\S+$/i.test(v.icon)) {
        ctx.addIssue({ code: 'custom', path: ['icon'], message: t('owners:validation.iconUrl') })
      }
    })
    .transform((v): ModelOwner => ({ id: Number(v.id), name: v.name, icon: v.icon.replace(/\/+$/, '') }))
}
