/**
 * A real, tiny transformers.js model, written at test time with no download: a BERT tokenizer over
 * a small WordPiece vocabulary and an ONNX graph whose `last_hidden_state` is one embedding row per
 * token (`Gather(embeddings, input_ids)`). Mean pooling over it is a bag of word vectors, so texts
 * that share words come out closer than texts that share none. The special tokens and [UNK] embed
 * to zeros: a text of unknown words has nothing to embed.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const TINY_MODEL_HIDDEN_SIZE = 8

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const
const WORDS = [
  'ada', 'lovelace', 'mathematician', 'poet', 'farming', 'agriculture', 'committee', 'senate',
  'house', 'river', 'bridge', 'music', 'piano', 'composer', 'city', 'london', 'paris', 'bank',
  'money', 'tax', 'law', 'bill', 'water', 'the', 'of', 'and', '##s', '.',
]
export const TINY_MODEL_VOCABULARY: readonly string[] = [...SPECIAL_TOKENS, ...WORDS]

/** Writes the model into a new temporary directory named `name` and answers its path. */
export function writeTinyModel(name = 'tiny-bert'): string {
  const directory = join(mkdtempSync(join(tmpdir(), 'er-tiny-model-')), name)
  mkdirSync(join(directory, 'onnx'), { recursive: true })
  const vocabulary = TINY_MODEL_VOCABULARY
  const json = (file: string, value: unknown) => writeFileSync(join(directory, file), `${JSON.stringify(value, null, 2)}\n`)
  json('config.json', {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: TINY_MODEL_HIDDEN_SIZE,
    num_hidden_layers: 1,
    num_attention_heads: 1,
    intermediate_size: 2 * TINY_MODEL_HIDDEN_SIZE,
    max_position_embeddings: 64,
    type_vocab_size: 2,
    vocab_size: vocabulary.length,
    pad_token_id: 0,
  })
  json('tokenizer_config.json', {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: 64,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    mask_token: '[MASK]',
    clean_up_tokenization_spaces: true,
  })
  json('tokenizer.json', tokenizerJson(vocabulary))
  writeFileSync(join(directory, 'onnx', 'model.onnx'), modelOnnx(vocabulary.length, TINY_MODEL_HIDDEN_SIZE))
  return directory
}

function tokenizerJson(vocabulary: readonly string[]) {
  const id = (token: string) => vocabulary.indexOf(token)
  const special = (token: string) => ({ SpecialToken: { id: token, type_id: 0 } })
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((token) => ({ id: id(token), content: token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((token) => [token, { id: token, ids: [id(token)], tokens: [token] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(vocabulary.map((token, index) => [token, index])) },
  }
}

/** Distinct deterministic rows (mulberry32), zeros for the special tokens and [UNK]. */
export function tinyModelEmbeddings(rows: number, hidden: number): Float32Array {
  const values = new Float32Array(rows * hidden)
  let seed = 0x5eed
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  for (let row = SPECIAL_TOKENS.length; row < rows; row++) {
    for (let column = 0; column < hidden; column++) values[row * hidden + column] = Math.round((random() * 2 - 1) * 1000) / 1000
  }
  return values
}

// ONNX is protobuf (onnx.proto); these are the few field numbers the graph needs.
const FLOAT = 1
const INT64 = 7

function modelOnnx(vocabularySize: number, hidden: number): Uint8Array {
  const embeddings = tinyModelEmbeddings(vocabularySize, hidden)
  const tokens = [dimension('batch'), dimension('sequence')]
  const graph = concat(
    // NodeProto: input = 1, output = 2, name = 3, op_type = 4
    bytesField(1, concat(stringField(1, 'embeddings'), stringField(1, 'input_ids'), stringField(2, 'last_hidden_state'), stringField(3, 'lookup'), stringField(4, 'Gather'))),
    stringField(2, 'tiny-bert'),
    // TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9 (little-endian)
    bytesField(5, concat(varintField(1, vocabularySize), varintField(1, hidden), varintField(2, FLOAT), stringField(8, 'embeddings'), bytesField(9, littleEndian(embeddings)))),
    bytesField(11, valueInfo('input_ids', INT64, tokens)),
    bytesField(11, valueInfo('attention_mask', INT64, tokens)),
    bytesField(11, valueInfo('token_type_ids', INT64, tokens)),
    bytesField(12, valueInfo('last_hidden_state', FLOAT, [...tokens, dimension(hidden)])),
  )
  // ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 (domain = 1, version = 2)
  return concat(varintField(1, 8), stringField(2, 'entity-registry tests'), bytesField(7, graph), bytesField(8, concat(stringField(1, ''), varintField(2, 17))))
}

/** TensorShapeProto.Dimension: dim_value = 1, dim_param = 2. */
function dimension(size: number | string): Uint8Array {
  return typeof size === 'number' ? varintField(1, size) : stringField(2, size)
}

/** ValueInfoProto { name = 1, type = 2: TypeProto { tensor_type = 1: { elem_type = 1, shape = 2: { dim = 1 } } } }. */
function valueInfo(name: string, elementType: number, dimensions: Uint8Array[]): Uint8Array {
  const shape = concat(...dimensions.map((encoded) => bytesField(1, encoded)))
  return concat(stringField(1, name), bytesField(2, bytesField(1, concat(varintField(1, elementType), bytesField(2, shape)))))
}

function littleEndian(values: Float32Array): Uint8Array {
  const bytes = new Uint8Array(values.length * 4)
  const view = new DataView(bytes.buffer)
  values.forEach((value, index) => view.setFloat32(index * 4, value, true))
  return bytes
}

function varint(value: number): number[] {
  const bytes: number[] = []
  let rest = BigInt(value)
  do {
    const low = Number(rest & 0x7fn)
    rest >>= 7n
    bytes.push(rest > 0n ? low | 0x80 : low)
  } while (rest > 0n)
  return bytes
}

const varintField = (field: number, value: number) => Uint8Array.from([...varint(field << 3), ...varint(value)])
const bytesField = (field: number, value: Uint8Array) => concat(Uint8Array.from([...varint((field << 3) | 2), ...varint(value.length)]), value)
const stringField = (field: number, value: string) => bytesField(field, new TextEncoder().encode(value))

function concat(...parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((total, part) => total + part.length, 0))
  let offset = 0
  for (const part of parts) {
    joined.set(part, offset)
    offset += part.length
  }
  return joined
}
