import { randomUUID } from 'node:crypto';
import { BigIntType, Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { ProductVersion } from './product-version.entity';

@Entity({ tableName: 'version_file' })
export class VersionFile {
  [OptionalProps]?: 'createdAt' | 'contentType';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => ProductVersion, { deleteRule: 'cascade', index: true })
  version!: ProductVersion;

  /** The file name as uploaded, shown to customers; never used to build a path. */
  @Property({ type: 'text' })
  name!: string;

  @Property({ type: new BigIntType('number') })
  size!: number;

  @Property({ type: 'text' })
  sha256!: string;

  /** Opaque key inside the file storage, made from internal ids only. */
  @Property({ type: 'text' })
  storageKey!: string;

  @Property({ type: 'text' })
  contentType: string = 'application/octet-stream';

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
