import { useTranslation } from 'react-i18next'
import { isAdmin } from '@/lib/roles'
import { useUser } from '@/stores/session'
import { TasksPanel } from './tasks-panel'
import { Screen } from '@/components/screen'

/** /panel/task: administrators see every async task, anyone else their own (like the log screen). */
export default function TaskScreen() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <Screen title={t('tasks:task.title')} description={t('tasks:task.description')}>
      <TasksPanel admin={isAdmin(user.role)} />
    </Screen>
  )
}
