import { http, HttpResponse } from 'msw'

let notice = ''

/** The notice the mocked server answers (tests set it). */
export function setMockNotice(text: string): void {
  notice = text
}

export const noticeHandlers = [http.get('*/api/notice', () => HttpResponse.json({ success: true, message: '', data: notice }))]
