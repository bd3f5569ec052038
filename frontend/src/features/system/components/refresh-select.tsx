import { useTranslation } from 'react-i18next'
import { NativeSelect } from '@/components/ui/native-select'

/** Auto-refresh intervals of the system panel (spec section 9), in ms; 0 is off. */
export const REFRESH_CHOICES = [0, 1_000, 3_000, 5_000, 10_000, 30_000, 60_000] as const

export function RefreshSelect({ value, onChange }: { value: number; onChange: (ms: number) => void }) {
  const { t } = useTranslation()
  return (
    <NativeSelect
      className="w-auto"
      value={value}
      onChange={(e) => onChange(Number(e.target.value))}
      aria-label={t('system:refresh.label')}
      data-testid="system-refresh"
    >
      {REFRESH_CHOICES.map((ms) => (
        <option key={ms} value={ms}>
          {ms === 0
            ? t('system:refresh.off')
            : ms < 60_000
              ? t('system:refresh.seconds', { n: ms / 1000 })
              : t('system:refresh.minute')}
        </option>
      ))}
    </NativeSelect>
  )
}
