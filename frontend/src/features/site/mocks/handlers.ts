import { http, HttpResponse } from 'msw'
import type { SiteInfo } from '@/types/api'

export const mockStatus: Partial<SiteInfo> = {
  system_name: 'Switchboard Test',
  version: 'v0.17',
  language: 'zh_CN',
  quota_per_unit: 500000,
  display_in_currency: true,
  chat_link: '',
}

export const siteHandlers = [
  http.get('*/api/status', () => HttpResponse.json({ success: true, message: '', data: mockStatus })),
  http.get('*/api/about', () => HttpResponse.json({ success: true, message: '', data: '' })),
]
