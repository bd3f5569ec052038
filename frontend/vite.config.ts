/// <reference types="vitest/config" />
import { availableParallelism } from 'node:os'
import { fileURLToPath, URL } from 'node:url'
import tailwindcss from '@tailwindcss/vite'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// The Switchboard server; override with SWITCHBOARD_API=http://host:port.
const apiTarget = process.env.SWITCHBOARD_API ?? 'http://127.0.0.1:3000'
const proxy = {
  '/api': { target: apiTarget, changeOrigin: true },
  '/v1': { target: apiTarget, changeOrigin: true },
  '/mj': { target: apiTarget, changeOrigin: true },
}

export default defineConfig({
  plugins: [react(), tailwindcss()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: { proxy },
  preview: { proxy },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 600,
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    css: false,
    // One jsdom window and module graph per worker, not per file: a fresh environment, setup
    // and import per file cost more than half the run. src/test/setup.ts starts each file from
    // the state a fresh one would have.
    isolate: false,
    // Vitest's default (cores - 1) is a single worker on a 2-core machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Whole-app renders with lazy routes take a few seconds on a busy 2-core machine; these
    // bounds catch a hang without failing a slow but correct run.
    testTimeout: 30_000,
  },
})
