// rigml view: the page script of the local web viewer (served by rigml-viz's viewer module).
//
// Loads /info.json (joint names, clips, labels from rigml) and /model.glb (plus /compare.glb
// with --compare), both written by rigml's glTF writer: joint j is node j, one mesh whose
// primitives are the character's parts, skin weights in JOINTS_n / WEIGHTS_n sets of four.
// Shows the mesh coloured by the selected joint's weights (viridis heat map) or by the
// strongest joint per vertex, the skeleton as lines with a pickable dot per joint, and plays
// the clips. With a second file: both side by side, either alone, or their difference.
//
// window.__rigml is a small API for tests and scripts (joint names, screen positions, a
// checksum of the colours shown, errors seen).

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { DIFFERENCE, DIFFERENCE_SCALE, UNSKINNED, VIRIDIS, jointColour, lookup, setColour } from '/colormap.js';

const $ = (id) => document.getElementById(id);
const errors = [];

function fail(message) {
  errors.push(String(message));
  const status = $('status');
  status.textContent = String(message);
  status.classList.add('error');
}
window.addEventListener('error', (e) => fail(e.message));
window.addEventListener('unhandledrejection', (e) => fail((e.reason && e.reason.message) || e.reason));

const PICK_RADIUS_PX = 12;

// ---- one loaded character ----

/** Skin rows of one primitive, flattened: `k` influences per vertex (zero weight = empty slot). */
function skinRows(geometry) {
  const sets = [];
  if (geometry.attributes.skinIndex && geometry.attributes.skinWeight) {
    sets.push([geometry.attributes.skinIndex, geometry.attributes.skinWeight]);
  }
  for (let s = 1; geometry.attributes[`joints_${s}`] && geometry.attributes[`weights_${s}`]; s++) {
    sets.push([geometry.attributes[`joints_${s}`], geometry.attributes[`weights_${s}`]]);
  }
  const n = geometry.attributes.position.count;
  const k = 4 * sets.length;
  const joint = new Int32Array(n * k);
  const weight = new Float32Array(n * k);
  sets.forEach(([ji, wi], s) => {
    for (let v = 0; v < n; v++) {
      for (let c = 0; c < 4; c++) {
        joint[v * k + 4 * s + c] = ji.getComponent(v, c);
        weight[v * k + 4 * s + c] = wi.getComponent(v, c);
      }
    }
  });
  // three.js rescales WEIGHTS_0 of skinned meshes to sum 1 on its own (it skins with four
  // influences); the file's rows sum to 1 over all sets, so undo that where there are more.
  if (sets.length > 1) {
    for (let v = 0; v < n; v++) {
      let rest = 0;
      for (let c = v * k + 4; c < v * k + k; c++) rest += weight[c];
      if (rest > 0) for (let c = v * k; c < v * k + 4; c++) weight[c] *= 1 - rest;
    }
  }
  // rigml's writer stores "no influence" as weight 1 on joint 0 and lists those vertices.
  const unskinned = new Uint8Array(n);
  for (const v of geometry.userData.rigml_unskinned || []) {
    if (v >= 0 && v < n) {
      unskinned[v] = 1;
      weight.fill(0, v * k, v * k + k);
    }
  }
  return { n, k, joint, weight, unskinned, skinned: k > 0 };
}

class Model {
  constructor(info, gltf, scene) {
    this.info = info;
    this.root = gltf.scene;
    this.clips = gltf.animations;
    this.mixer = new THREE.AnimationMixer(this.root);
    this.action = null;
    const jointCount = info.joints.length;
    this.bones = new Array(jointCount).fill(null);
    this.meshes = [];
    this.root.traverse((object) => {
      const assoc = gltf.parser.associations.get(object);
      if (assoc && assoc.nodes !== undefined && assoc.nodes < jointCount && !object.isMesh) {
        this.bones[assoc.nodes] = object;
      }
      if (object.isMesh) {
        // Lambert shading needs normals; OBJ files and some exports have none.
        if (!object.geometry.attributes.normal) object.geometry.computeVertexNormals();
        const rows = skinRows(object.geometry);
        const colours = new Float32Array(rows.n * 3);
        object.geometry.setAttribute('color', new THREE.BufferAttribute(colours, 3));
        object.material = new THREE.MeshLambertMaterial({ vertexColors: true, side: THREE.DoubleSide });
        object.frustumCulled = false;
        this.meshes.push({ object, rows, colours });
      }
    });
    scene.add(this.root);
    this.overlay = new THREE.Group();
    scene.add(this.overlay);
    this.measure();
    this.size = this.box.isEmpty() ? 1 : Math.max(this.box.getSize(new THREE.Vector3()).length(), 1e-6);
    this.buildOverlay();
  }

  /** Bounds of the skinned mesh and the joints in the current pose, without the side offset. */
  measure() {
    const offset = this.root.position.clone();
    this.root.position.set(0, 0, 0);
    this.root.updateMatrixWorld(true);
    const box = new THREE.Box3();
    for (const { object } of this.meshes) box.expandByObject(object, true);
    for (const bone of this.bones) {
      if (bone) box.expandByPoint(bone.getWorldPosition(new THREE.Vector3()));
    }
    this.root.position.copy(offset);
    this.root.updateMatrixWorld(true);
    this.box = box;
  }

  /** Skeleton lines (joint to parent) and a dot per joint, drawn over the mesh. */
  buildOverlay() {
    const parents = this.info.parents;
    this.links = [];
    parents.forEach((p, j) => {
      if (p !== null && this.bones[j] && this.bones[p]) this.links.push([j, p]);
    });
    const lineGeometry = new THREE.BufferGeometry();
    lineGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(this.links.length * 6), 3));
    const lineMaterial = new THREE.LineBasicMaterial({ color: 0xffffff, depthTest: false, transparent: true, opacity: 0.8 });
    this.lines = new THREE.LineSegments(lineGeometry, lineMaterial);
    this.lines.renderOrder = 10;
    this.lines.frustumCulled = false;
    this.overlay.add(this.lines);
    const sphere = new THREE.SphereGeometry(1, 10, 8);
    this.dotMaterial = new THREE.MeshBasicMaterial({ color: 0x9ad0ff, depthTest: false });
    this.selectedMaterial = new THREE.MeshBasicMaterial({ color: 0xff3030, depthTest: false });
    this.dots = this.bones.map((bone) => {
      if (!bone) return null;
      const dot = new THREE.Mesh(sphere, this.dotMaterial);
      dot.renderOrder = 11;
      dot.scale.setScalar(this.size * 0.006);
      this.overlay.add(dot);
      return dot;
    });
  }

  updateOverlay() {
    this.root.updateMatrixWorld(true);
    const p = new THREE.Vector3();
    this.dots.forEach((dot, j) => {
      if (dot) dot.position.copy(this.bones[j].getWorldPosition(p));
    });
    const array = this.lines.geometry.attributes.position.array;
    this.links.forEach(([j, parent], i) => {
      this.bones[j].getWorldPosition(p).toArray(array, 6 * i);
      this.bones[parent].getWorldPosition(p).toArray(array, 6 * i + 3);
    });
    this.lines.geometry.attributes.position.needsUpdate = true;
  }

  setVisible(visible) {
    this.root.visible = visible;
    this.overlay.visible = visible;
  }

  highlight(j) {
    this.dots.forEach((dot, i) => {
      if (!dot) return;
      dot.material = i === j ? this.selectedMaterial : this.dotMaterial;
      dot.scale.setScalar(this.size * (i === j ? 0.011 : 0.006));
    });
  }

  /** Weight of joint `j` (this model's index) at vertex `v` of mesh `m`. */
  weight(m, v, j) {
    const { k, joint, weight } = this.meshes[m].rows;
    let w = 0;
    for (let c = v * k; c < v * k + k; c++) if (joint[c] === j && weight[c] > 0) w += weight[c];
    return w;
  }

  /** Colour every vertex: `f(m, v)` gives sRGB or null (unskinned grey). */
  paint(f) {
    this.meshes.forEach((mesh, m) => {
      for (let v = 0; v < mesh.rows.n; v++) {
        const c = mesh.rows.skinned && !mesh.rows.unskinned[v] ? f(m, v) : null;
        setColour(mesh.colours, v, c || UNSKINNED);
      }
      mesh.object.geometry.attributes.color.needsUpdate = true;
    });
  }

  paintHeat(j) {
    if (j === null || j < 0) {
      this.paint(() => null);
      return;
    }
    this.paint((m, v) => lookup(VIRIDIS, this.weight(m, v, j)));
  }

  paintDominant() {
    this.paint((m, v) => {
      const { k, joint, weight } = this.meshes[m].rows;
      let best = -1, bw = 0;
      for (let c = v * k; c < v * k + k; c++) if (weight[c] > bw) [best, bw] = [joint[c], weight[c]];
      return best < 0 ? null : jointColour(best);
    });
  }

  playClip(index, playing) {
    if (this.action) this.action.stop();
    this.action = null;
    const clip = this.clips[index];
    if (!clip) return;
    this.action = this.mixer.clipAction(clip);
    this.action.play();
    this.action.paused = !playing;
  }
}

// ---- the page ----

const view = $('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x20232a);
scene.add(new THREE.HemisphereLight(0xffffff, 0x606070, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.2);
sun.position.set(1, 2, 3);
scene.add(sun);
const camera = new THREE.PerspectiveCamera(35, 1, 0.01, 1000);
const controls = new OrbitControls(camera, renderer.domElement);
const clock = new THREE.Clock();

const state = { a: null, b: null, selected: null, mode: 'heat', show: 'both', playing: false, frames: 0, ready: false };

function resize() {
  const w = Math.max(view.clientWidth, 1), h = Math.max(view.clientHeight, 1);
  renderer.setSize(w, h);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);

async function load(info) {
  const gltf = await new GLTFLoader().loadAsync(info.url);
  return new Model(info, gltf, scene);
}

/** Index in B of A's joint `j` (by name), or -1. */
function jointInB(j) {
  return j === null || !state.b ? -1 : state.b.info.joints.indexOf(state.a.info.joints[j]);
}

/** Whether A and B have the same primitives and vertex counts (so weights compare row by row). */
function sameMeshes() {
  const { a, b } = state;
  return b && a.meshes.length === b.meshes.length && a.meshes.every((m, i) => m.rows.n === b.meshes[i].rows.n);
}

/** |A − B| per vertex: the selected joint's weights, or half the L1 distance of whole rows. */
function paintDifference() {
  const { a, b } = state;
  if (!sameMeshes()) {
    a.paint(() => null);
    $('weight-readout').textContent = 'the two files have different meshes: no difference map';
    return;
  }
  const j = state.selected;
  const jb = jointInB(j);
  const bToA = b.info.joints.map((name) => a.info.joints.indexOf(name));
  let max = 0, sum = 0, count = 0;
  a.paint((m, v) => {
    let d;
    if (j !== null) {
      d = Math.abs(a.weight(m, v, j) - (jb < 0 ? 0 : b.weight(m, v, jb)));
    } else {
      const ra = a.meshes[m].rows, rb = b.meshes[m].rows;
      const wa = new Map(), wb = new Map();
      for (let c = v * ra.k; c < v * ra.k + ra.k; c++) if (ra.weight[c] > 0) wa.set(ra.joint[c], (wa.get(ra.joint[c]) || 0) + ra.weight[c]);
      for (let c = v * rb.k; c < v * rb.k + rb.k; c++) {
        if (rb.weight[c] <= 0 || rb.unskinned[v]) continue;
        const key = bToA[rb.joint[c]] >= 0 ? bToA[rb.joint[c]] : -1 - rb.joint[c];
        wb.set(key, (wb.get(key) || 0) + rb.weight[c]);
      }
      let l1 = 0;
      for (const [key, w] of wa) l1 += Math.abs(w - (wb.get(key) || 0));
      for (const [key, w] of wb) if (!wa.has(key)) l1 += w;
      d = 0.5 * l1;
    }
    max = Math.max(max, d);
    sum += d;
    count++;
    return lookup(DIFFERENCE, d / DIFFERENCE_SCALE);
  });
  const what = j === null ? 'half L1 of whole rows' : `joint ${a.info.joints[j]}`;
  $('weight-readout').textContent = `difference (${what}): max ${max.toFixed(4)}, mean ${(count ? sum / count : 0).toFixed(4)}`;
}

function legend() {
  const table = state.show === 'diff' && state.b ? DIFFERENCE : VIRIDIS;
  const stops = table.map((c, i) => `rgb(${c.join(',')}) ${((100 * i) / (table.length - 1)).toFixed(0)}%`);
  $('legend').style.background = state.mode === 'dominant' && state.show !== 'diff' ? 'none' : `linear-gradient(to right, ${stops.join(',')})`;
}

/** Recolour everything for the current selection, mode and comparison view. */
function repaint() {
  const { a, b } = state;
  const j = state.selected;
  if (b && state.show === 'diff') {
    paintDifference();
  } else {
    for (const [model, index] of [[a, j], [b, jointInB(j)]]) {
      if (!model) continue;
      if (state.mode === 'dominant') model.paintDominant();
      else model.paintHeat(index);
    }
    if (j !== null && a.meshes.length) {
      let touched = 0, max = 0;
      a.meshes.forEach((mesh, m) => {
        for (let v = 0; v < mesh.rows.n; v++) {
          const w = a.weight(m, v, j);
          if (w > 0) touched++;
          max = Math.max(max, w);
        }
      });
      $('weight-readout').textContent = `${touched} vertices weighted, max weight ${max.toFixed(3)}`;
    } else {
      $('weight-readout').textContent = '';
    }
  }
  a.highlight(j);
  if (b) b.highlight(jointInB(j));
  legend();
}

function select(j) {
  state.selected = j;
  $('joint-name').textContent = j === null ? 'none' : state.a.info.joints[j];
  for (const li of $('joints').children) li.classList.toggle('selected', Number(li.dataset.joint) === j);
  if (state.mode === 'dominant') {
    state.mode = 'heat';
    $('mode').value = 'heat';
  }
  repaint();
}

/** Screen (client) position of a world point, or null when behind the camera. */
function toScreen(world) {
  const rect = renderer.domElement.getBoundingClientRect();
  const p = world.clone().project(camera);
  if (p.z < -1 || p.z > 1) return null;
  return { x: rect.left + ((p.x + 1) / 2) * rect.width, y: rect.top + ((1 - p.y) / 2) * rect.height };
}

/** Screen positions of A's joints (and B's, mapped to A's names) that are shown. */
function jointPositions() {
  const out = [];
  for (const model of [state.a, state.b]) {
    if (!model || !model.root.visible) continue;
    model.updateOverlay();
    model.bones.forEach((bone, j) => {
      const a = model === state.a ? j : state.a.info.joints.indexOf(model.info.joints[j]);
      if (!bone || a < 0) return;
      const s = toScreen(bone.getWorldPosition(new THREE.Vector3()));
      if (s) out.push({ joint: a, name: state.a.info.joints[a], ...s });
    });
  }
  return out;
}

/** Pick the joint dot nearest to a click (within PICK_RADIUS_PX). */
function pick(x, y) {
  let best = null, bestD = PICK_RADIUS_PX;
  for (const p of jointPositions()) {
    const d = Math.hypot(p.x - x, p.y - y);
    if (d <= bestD) [best, bestD] = [p.joint, d];
  }
  if (best !== null) select(best);
}

function layout() {
  const { a, b } = state;
  const labels = $('labels');
  labels.replaceChildren();
  if (!b) return;
  const show = state.show;
  a.setVisible(show !== 'b');
  b.setVisible(show === 'both' || show === 'b');
  const width = a.box.isEmpty() ? 1 : a.box.max.x - a.box.min.x;
  b.root.position.x = show === 'both' ? 1.3 * Math.max(width, 0.3 * a.size) : 0;
  b.root.updateMatrixWorld(true);
  const names = show === 'both' ? [`A: ${a.info.label}`, `B: ${b.info.label}`] : show === 'b' ? [`B: ${b.info.label}`] : show === 'diff' ? [`|A − B| on A: ${a.info.label}`] : [`A: ${a.info.label}`];
  for (const name of names) {
    const span = document.createElement('span');
    span.textContent = name;
    labels.appendChild(span);
  }
  frame();
  repaint();
}

/** Point the camera at everything visible, from the front (+Z) a little right and above, Y up. */
function frame() {
  const box = new THREE.Box3();
  for (const model of [state.a, state.b]) {
    if (model && model.root.visible && !model.box.isEmpty()) {
      box.union(model.box.clone().translate(model.root.position));
    }
  }
  if (box.isEmpty()) box.setFromCenterAndSize(new THREE.Vector3(), new THREE.Vector3(1, 1, 1));
  const centre = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  const fov = THREE.MathUtils.degToRad(camera.fov);
  const fit = Math.max(size.y / 2 / Math.tan(fov / 2), size.x / 2 / Math.tan(fov / 2) / camera.aspect);
  const distance = 1.15 * fit + size.z;
  camera.near = Math.max(distance / 1000, 1e-4);
  camera.far = distance * 100;
  const direction = new THREE.Vector3(0.35, 0.2, 1).normalize();
  camera.position.copy(centre).addScaledVector(direction, distance);
  camera.updateProjectionMatrix();
  controls.target.copy(centre);
  controls.update();
}

function jointList() {
  const list = $('joints');
  list.replaceChildren();
  const filter = $('filter').value.toLowerCase();
  state.a.info.joints.forEach((name, j) => {
    if (filter && !name.toLowerCase().includes(filter)) return;
    const li = document.createElement('li');
    li.textContent = name;
    li.title = name;
    li.dataset.joint = String(j);
    li.classList.toggle('selected', j === state.selected);
    li.addEventListener('click', () => select(j));
    list.appendChild(li);
  });
}

function setupClips() {
  const clips = state.a.clips;
  if (!clips.length) return;
  $('clip-row').hidden = false;
  const chooser = $('clip');
  clips.forEach((clip, i) => {
    const option = document.createElement('option');
    option.value = String(i);
    option.textContent = state.a.info.clips[i] || clip.name || `clip ${i}`;
    chooser.appendChild(option);
  });
  const start = () => {
    const i = Number(chooser.value);
    state.a.playClip(i, state.playing);
    if (state.b) state.b.playClip(i, state.playing);
  };
  chooser.addEventListener('change', start);
  $('play').addEventListener('click', () => {
    state.playing = !state.playing;
    $('play').textContent = state.playing ? 'Pause' : 'Play';
    if (!state.a.action) start();
    for (const model of [state.a, state.b]) if (model && model.action) model.action.paused = !state.playing;
  });
}

function animate() {
  const dt = clock.getDelta();
  if (state.playing) {
    state.a.mixer.update(dt);
    if (state.b) state.b.mixer.update(dt);
  }
  state.a.updateOverlay();
  if (state.b) state.b.updateOverlay();
  controls.update();
  renderer.render(scene, camera);
  state.frames++;
  requestAnimationFrame(animate);
}

/** Sum of the colours shown on A, weighted by position so a permutation changes it too. */
function colourChecksum() {
  let sum = 0;
  for (const mesh of state.a.meshes) mesh.colours.forEach((c, i) => (sum += c * (1 + (i % 97))));
  return sum;
}

/** Per-vertex weight sums over every influence set of A's skinned vertices, and the most
 * non-zero influences on one vertex: checks that the page reads JOINTS_1/WEIGHTS_1 and up. */
function weightStats() {
  let min = Infinity, max = -Infinity, influencesMax = 0, vertices = 0;
  for (const { rows } of state.a.meshes) {
    if (!rows.skinned) continue;
    for (let v = 0; v < rows.n; v++) {
      if (rows.unskinned[v]) continue;
      let sum = 0, count = 0;
      for (let c = v * rows.k; c < v * rows.k + rows.k; c++) {
        if (rows.weight[c] > 0) {
          sum += rows.weight[c];
          count++;
        }
      }
      [min, max, influencesMax] = [Math.min(min, sum), Math.max(max, sum), Math.max(influencesMax, count)];
      vertices++;
    }
  }
  return { min, max, influencesMax, vertices };
}

window.__rigml = {
  weightStats,
  ready: false,
  errors,
  joints: () => (state.a ? [...state.a.info.joints] : []),
  selected: () => (state.selected === null ? null : state.a.info.joints[state.selected]),
  shownName: () => $('joint-name').textContent,
  jointScreenPos(name) {
    const p = jointPositions().find((q) => q.name === name);
    return p ? { x: p.x, y: p.y } : null;
  },
  jointScreenPositions: () => jointPositions().map(({ name, x, y }) => ({ name, x, y })),
  colourChecksum,
  frames: () => state.frames,
  clipTime: () => (state.a && state.a.action ? state.a.action.time : null),
  meshVertices: () => (state.a ? state.a.meshes.reduce((n, m) => n + m.rows.n, 0) : 0),
};

async function main() {
  const info = await (await fetch('/info.json')).json();
  $('title').textContent = info.model.label;
  document.title = `rigml view: ${info.model.label}`;
  resize();
  state.a = await load(info.model);
  if (info.compare) {
    state.b = await load(info.compare);
    $('compare-row').hidden = false;
    $('show').addEventListener('change', () => {
      state.show = $('show').value;
      layout();
    });
  }
  $('mode').addEventListener('change', () => {
    state.mode = $('mode').value;
    repaint();
  });
  $('filter').addEventListener('input', jointList);
  $('fit').addEventListener('click', () => {
    for (const model of [state.a, state.b]) if (model) model.measure();
    layout();
    frame();
  });
  let down = null;
  renderer.domElement.addEventListener('pointerdown', (e) => (down = [e.clientX, e.clientY]));
  renderer.domElement.addEventListener('pointerup', (e) => {
    if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) < 4) pick(e.clientX, e.clientY);
    down = null;
  });
  jointList();
  setupClips();
  state.mode = 'dominant';
  $('mode').value = 'dominant';
  frame();
  layout();
  repaint();
  const a = info.model;
  const parts = [`${a.vertices} vertices, ${a.triangles} triangles, ${a.joints.length} joints, ${a.clips.length} clips`];
  if (!a.skinned) parts.push('no skin weights');
  if (info.compare && !sameMeshes()) parts.push('B has a different mesh');
  if (!errors.length) $('status').textContent = parts.join('; ');
  animate();
  window.__rigml.ready = true;
}

main().catch((e) => fail(`could not load the model: ${e && e.message ? e.message : e}`));
