import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { errorText } from '@/lib/errors'
import { formatDuration } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useCopyChannel } from '../api/copy-channel'
import { useSetChannelStatus } from '../api/set-channel-status'
import { useTestAllChannels, useTestChannel } from '../api/test-channels'
import { useUpdateBalance } from '../api/update-balance'
import { CHANNEL_STATUS, type Channel, type TestAllSummary, type TestOutcome } from '../types'

/** A channel row's own actions (test, enable/disable, copy, balance) and testing them all, with what they left. */
export function useChannelActions() {
  const { t } = useTranslation()
  const [testingId, setTestingId] = useState<number | null>(null)
  // Test results since the page was opened, by channel: a failure shows as such, with its reason.
  const [outcomes, setOutcomes] = useState<Record<number, TestOutcome>>({})
  const [testAllResult, setTestAllResult] = useState<TestAllSummary | null>(null)
  const [balanceId, setBalanceId] = useState<number | null>(null)

  const statusMutation = useSetChannelStatus()
  const testMutation = useTestChannel()
  const testAllMutation = useTestAllChannels()
  const balanceMutation = useUpdateBalance()
  const copyMutation = useCopyChannel()

  const toggleStatus = (c: Channel) => {
    const status = c.status === CHANNEL_STATUS.enabled ? CHANNEL_STATUS.disabled : CHANNEL_STATUS.enabled
    statusMutation.mutate(
      { id: c.id, status },
      {
        onSuccess: () =>
          notify.success(status === CHANNEL_STATUS.enabled ? t('channels:toast.enabled') : t('channels:toast.disabled')),
      },
    )
  }

  const test = (c: Channel) => {
    if (!c.test_model.trim()) {
      notify.warning(t('channels:toast.testModelRequired'))
      return
    }
    setTestingId(c.id)
    testMutation.mutate(
      { id: c.id },
      {
        onSuccess: (r) => {
          setOutcomes((o) => ({ ...o, [c.id]: { ok: true, ms: r.time_ms } }))
          notify.success(t('channels:toast.tested', { name: c.name, model: r.model, time: formatDuration(r.time_ms) }))
        },
        onError: (e) => setOutcomes((o) => ({ ...o, [c.id]: { ok: false, message: errorText(e) } })),
        onSettled: () => setTestingId(null),
      },
    )
  }

  // All passed: a toast. Any failed: a dialog that names them, with the reasons.
  const testAll = () =>
    testAllMutation.mutate(undefined, {
      onSuccess: (s) => {
        const failures = s.failures ?? []
        setOutcomes((o) => {
          const next = { ...o }
          for (const f of failures) next[f.id] = { ok: false, message: f.message }
          return next
        })
        if (s.failed > 0) setTestAllResult(s)
        else notify.success(t('channels:toast.testedAll', { ...s }))
      },
    })

  const copy = (c: Channel) =>
    copyMutation.mutate(c.id, { onSuccess: ({ id: newId }) => notify.success(t('channels:toast.copied', { name: c.name, id: newId })) })

  const updateBalance = (c: Channel) => {
    setBalanceId(c.id)
    balanceMutation.mutate(c.id, {
      onSuccess: ({ balance }) => notify.success(t('channels:toast.balance', { name: c.name, balance: balance.toFixed(2) })),
      onSettled: () => setBalanceId(null),
    })
  }

  return {
    testingId,
    outcomes,
    testAllResult,
    closeTestAllResult: () => setTestAllResult(null),
    balanceId,
    toggleStatus,
    statusPending: statusMutation.isPending,
    test,
    testAll,
    testAllPending: testAllMutation.isPending,
    copy,
    copyPending: copyMutation.isPending,
    updateBalance,
  }
}

export type ChannelActions = ReturnType<typeof useChannelActions>
