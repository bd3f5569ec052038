/** A model owner (GET /api/model_ownedby): ids below 1000 are the built-in channel types. */
export interface ModelOwner {
  id: number
  name: string
  icon: string
}
