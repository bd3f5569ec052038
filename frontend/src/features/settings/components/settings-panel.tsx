import { useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import { ListState } from '@/components/list-kit'
import { Card } from '@/components/ui/card'
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs'
import type { QuotaUnit } from '@/lib/format'
import { ROLE } from '@/types/api'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { useOptions } from '../api/options'
import { sectionsOf, type SettingsTab } from '../catalogue'
import type { OptionItem } from '../types'
import { SettingsTabForm } from './settings-tab-form'

const TABS: SettingsTab[] = ['operation', 'system', 'other']

/**
 * Settings (administrators): three tabs, each one form of typed inputs with one Save. The
 * server lists to an administrator only what they manage; root also sees sign-in, mail,
 * secrets (write-only) and the settings that decide where the server connects. `?tab=` opens
 * that tab first.
 */
export function SettingsPanel() {
  const { t } = useTranslation()
  const options = useOptions()
  const role = useUser()?.role ?? 0
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const unit = useMemo<QuotaUnit>(() => ({ dollars: display_in_currency, perUnit: quota_per_unit }), [display_in_currency, quota_per_unit])
  const items = useMemo(() => new Map<string, OptionItem>((options.data ?? []).map((o) => [o.key, o])), [options.data])
  // A link may open a tab (e.g. ?tab=system for the Telegram bot's token).
  const [searchParams] = useSearchParams()
  const wanted = searchParams.get('tab')
  const tabs = useMemo(() => {
    const keys = [...items.keys()]
    return TABS.map((tab) => ({ tab, sections: sectionsOf(tab, keys) })).filter((x) => x.sections.length > 0)
  }, [items])

  if (options.isPending || options.isError || !options.data) {
    return (
      <Card>
        <ListState
          loading={options.isPending}
          empty
          emptyText={t('settings:loadFailed')}
          emptyTestId="settings-empty"
          query={options}
        >
          {null}
        </ListState>
      </Card>
    )
  }

  return (
    <div className="grid grid-cols-1 gap-4">
      {role < ROLE.root && (
        <p className="rounded-lg border border-dashed p-3 text-sm text-muted-foreground" data-testid="settings-admin-note">
          {t('settings:adminNote')}
        </p>
      )}
      <Tabs defaultValue={tabs.find((x) => x.tab === wanted)?.tab ?? tabs[0]?.tab}>
        <TabsList>
          {tabs.map(({ tab }) => (
            <TabsTrigger key={tab} value={tab} data-testid={`settings-tab-${tab}`}>
              {t(`settings:tabs.${tab}`)}
            </TabsTrigger>
          ))}
        </TabsList>
        {/* Every tab stays mounted: switching tabs keeps what was typed and not saved yet. */}
        {tabs.map(({ tab, sections }) => (
          <TabsContent key={tab} value={tab} forceMount className="data-[state=inactive]:hidden">
            <SettingsTabForm tab={tab} sections={sections} items={items} unit={unit} />
          </TabsContent>
        ))}
      </Tabs>
    </div>
  )
}
