// The reference for a warm next(): hi/lo block allocation in a few lines of plain JS, the way
// an application would write it by hand (one $inc of `block` per block, numbers handed out
// from memory in between).
export class PlainHiLo {
  constructor(counters, name, block) {
    Object.assign(this, { counters, name, block, next: 1, last: 0 });
  }

  async take() {
    if (this.next > this.last) {
      const counter = await this.counters.findOneAndUpdate({ _id: this.name }, { $inc: { seq: this.block } }, { upsert: true, returnDocument: "after" });
      this.last = counter.seq;
      this.next = this.last - this.block + 1;
    }
    return this.next++;
  }
}
