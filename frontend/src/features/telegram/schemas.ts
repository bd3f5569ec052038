import type { TFunction } from 'i18next'
import { z } from 'zod'
import { BUILTIN_COMMANDS, PARSE_MODES, type ParseMode, type TelegramMenu, type TelegramMenuPayload } from './types'

export const COMMAND_MAX = 32
export const DESCRIPTION_MAX = 256
export const REPLY_MAX = 4096

/** Telegram's rule for a bot command: lower-case letters, digits and underscores. */
const COMMAND = /^[a-z0-9_]+$/

/** Characters as the server counts them (Unicode scalar values, not UTF-16 units). */
export function charCount(value: string): number {
  return [...value].length
}

/** A command as typed, without the spaces around it and the leading '/' people tend to type. */
export function normalizeCommand(value: string): string {
  return value.trim().replace(/^\/+/, '')
}

export function isBuiltinCommand(command: string): boolean {
  return (BUILTIN_COMMANDS as readonly string[]).includes(command)
}

export interface TelegramMenuFormValues {
  command: string
  description: string
  parse_mode: ParseMode
  reply_message: string
}

export function telegramMenuFormDefaults(m?: TelegramMenu): TelegramMenuFormValues {
  if (!m) return { command: '', description: '', parse_mode: '', reply_message: '' }
  return {
    command: m.command,
    description: m.description,
    parse_mode: (PARSE_MODES as readonly string[]).includes(m.parse_mode) ? m.parse_mode : '',
    reply_message: m.reply_message,
  }
}

/**
 * Menu entry form, mirroring the server's checks: the command (a leading '/' stripped) 1-32 of
 * a-z, 0-9 and '_', not a built-in one; the description required, at most 256 characters; the
 * parse mode plain text, Markdown, MarkdownV2 or HTML; the reply required, at most 4096
 * characters (sent as typed: its spaces may matter to the parse mode).
 */
export function createTelegramMenuSchema(t: TFunction) {
  return z
    .object({
      command: z
        .string()
        .transform(normalizeCommand)
        .pipe(
          z
            .string()
            .min(1, t('telegram:validation.commandRequired'))
            .max(COMMAND_MAX, t('telegram:validation.commandTooLong', { max: COMMAND_MAX }))
            .regex(COMMAND, t('telegram:validation.commandInvalid'))
            .superRefine((v, ctx) => {
              if (isBuiltinCommand(v)) ctx.addIssue({ code: 'custom', message: t('telegram:validation.commandBuiltin', { command: v }) })
            }),
        ),
      description: z
        .string()
        .trim()
        .min(1, t('telegram:validation.descriptionRequired'))
        .refine((v) => charCount(v) <= DESCRIPTION_MAX, t('telegram:validation.descriptionTooLong', { max: DESCRIPTION_MAX })),
      parse_mode: z.enum(PARSE_MODES, { message: t('telegram:validation.parseMode') }),
      reply_message: z
        .string()
        .refine((v) => v.trim() !== '', t('telegram:validation.replyRequired'))
        .refine((v) => charCount(v) <= REPLY_MAX, t('telegram:validation.replyTooLong', { max: REPLY_MAX })),
    })
    .transform(
      (v): TelegramMenuPayload => ({
        command: v.command,
        description: v.description,
        parse_mode: v.parse_mode,
        reply_message: v.reply_message,
      }),
    )
}
