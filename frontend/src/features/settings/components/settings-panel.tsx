import { useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import { ListState } from '@/components/list-kit'
import { Card } from '@/components/ui/card'
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs'
import { useOptions } from '../api/options'
import { sectionsOf, type SettingsTab } from '../catalogue'
import type { OptionItem } from '../types'
import { OptionSection } from './option-section'

const TABS: SettingsTab[] = ['operation', 'system', 'other']

/** Settings (root): three tabs of sections, each input by the setting's kind; secrets write-only. */
export function SettingsPanel() {
  const { t } = useTranslation()
  const options = useOptions()
  const items = useMemo(() => new Map<string, OptionItem>((options.data ?? []).map((o) => [o.key, o])), [options.data])
  const keys = useMemo(() => [...items.keys()], [items])

  if (options.isPending || !options.data) {
    return (
      <Card>
        <ListState loading={options.isPending} empty emptyText={t('settings:loadFailed')} emptyTestId="settings-empty">
          {null}
        </ListState>
      </Card>
    )
  }

  return (
    <Tabs defaultValue="operation">
      <TabsList>
        {TABS.map((tab) => (
          <TabsTrigger key={tab} value={tab} data-testid={`settings-tab-${tab}`}>
            {t(`settings:tabs.${tab}`)}
          </TabsTrigger>
        ))}
      </TabsList>
      {TABS.map((tab) => (
        <TabsContent key={tab} value={tab} className="grid grid-cols-1 gap-4">
          {sectionsOf(tab, keys).map((section) => (
            <OptionSection key={section.id} section={section} items={items} />
          ))}
        </TabsContent>
      ))}
    </Tabs>
  )
}
